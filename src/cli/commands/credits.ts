import { defineCommand } from 'citty'
import type { Credits } from '../../stores/credits'
import type { Org, User } from '../../stores/account-types'
import { table } from '../format'
import { configArg, dataArg, storageArgs, decimalFlag, emailArg, eur, jsonArg, out, outJson, requireUser, withGateway } from '../common'

const LEDGER_LINES = 20

const summary = (user: User, org: Org, credits: Credits) =>
  [
    `Org "${org.name}" (${org.id}) of ${user.email}`,
    table([
      ['  balance', eur(credits.balance)],
      ['  total credits', eur(credits.total_credits)],
      ['  total usage', eur(credits.total_usage)],
    ]),
  ].join('\n')

const add = defineCommand({
  meta: { name: 'add', description: 'Add credits (EUR) to the org of a user' },
  args: {
    ...emailArg,
    amount: { type: 'string', required: true, valueHint: 'eur', description: 'Amount in EUR, an exact decimal such as 10 or 0.25' },
    note: { type: 'string', valueHint: 'text', description: 'Note kept in the ledger. Default: "model-gateway credits add"' },
    ...jsonArg,
    ...configArg,
    ...dataArg,
    ...storageArgs,
  },
  async run({ args }) {
    const amount = decimalFlag(args.amount, 'amount', { positive: true })
    await withGateway({ command: 'credits', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const user = await requireUser(cli, args.email)
      const org = (await cli.gateway.admin.getOrg(user.org_id))!
      const credits = await cli.gateway.admin.addCredits(org.id, amount, args.note || 'model-gateway credits add')
      if (args.json) return outJson({ added: amount, user: { id: user.id, email: user.email }, org: { id: org.id, name: org.name }, credits })
      out(`Added ${eur(amount)}.`)
      out(summary(user, org, credits))
    })
  },
})

const show = defineCommand({
  meta: { name: 'show', description: 'Show the credits of a user’s org (balance, total credits, total usage)' },
  args: {
    ...emailArg,
    ledger: { type: 'boolean', description: `Also list the ledger (the last ${LEDGER_LINES} grants and charges; every one with --json)` },
    ...jsonArg,
    ...configArg,
    ...dataArg,
    ...storageArgs,
  },
  async run({ args }) {
    await withGateway({ command: 'credits', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const user = await requireUser(cli, args.email)
      const org = (await cli.gateway.admin.getOrg(user.org_id))!
      const credits = await cli.gateway.admin.getCredits(org.id)
      const { admin } = cli.gateway
      if (args.json) {
        const ledger = args.ledger ? await admin.ledger(org.id) : undefined
        return outJson({ user: { id: user.id, email: user.email }, org: { id: org.id, name: org.name }, credits, ...(ledger ? { ledger } : {}) })
      }
      out(summary(user, org, credits))
      if (!args.ledger) return
      // Only the last entries are read: the ledger has one per charged request, kept for ever (docs/money.md).
      const last = await admin.ledger(org.id, { order: 'desc', limit: LEDGER_LINES + 1 })
      const shown = last.slice(0, LEDGER_LINES).reverse()
      out()
      if (last.length > shown.length) out(`Ledger (the last ${shown.length} entries; every one with --json):`)
      out(table([['AT', 'KIND', 'AMOUNT', 'NOTE'], ...shown.map((e) => [e.at, e.kind, eur(e.amount), e.note ?? ''])]))
    })
  },
})

/** `model-gateway credits`: add and show an org's credits. */
export const creditsCommand = defineCommand({
  meta: { name: 'credits', description: 'Add and show credits (EUR, kept per org)' },
  subCommands: { add, show },
})
