import { defineCommand } from 'citty'
import { trafficLimitsOf } from '../../billing/spend-limits-input'
import { requireSomeLimit, trafficArgs, trafficFromFlags, trafficLines } from '../traffic-flags'
import type { ApiKeyRecord } from '../../stores/account-types'
import { CliError } from '../errors'
import { table } from '../format'
import { configArg, dataArg, storageArgs, decimalFlag, emailArg, eur, flagsOf, jsonArg, out, outJson, requireUser, say, withGateway } from '../common'

const create = defineCommand({
  meta: { name: 'create', description: 'Issue an API key for a user (created, with an org, if missing) and print it once' },
  args: {
    ...emailArg,
    label: { type: 'string', valueHint: 'text', description: 'Label of the key. Default: "API key"' },
    'credit-limit': { type: 'string', valueHint: 'eur', description: 'Most this key may spend, in EUR (exact decimal). Default: no limit' },
    management: { type: 'boolean', description: 'Issue a management key: it manages the org’s keys through /api/v1/keys and nothing else (docs/keys.md)' },
    org: { type: 'string', valueHint: 'name', description: 'Name of the org created with a new user. Default: the email' },
    ...jsonArg,
    ...configArg,
    ...dataArg,
    ...storageArgs,
  },
  async run({ args }) {
    const creditLimit = args['credit-limit'] === undefined ? undefined : decimalFlag(args['credit-limit'], 'credit-limit', { positive: true })
    await withGateway({ command: 'keys', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const { admin } = cli.gateway
      let user = await admin.findUserByEmail(args.email)
      const created = !user
      if (!user) user = await admin.createUser({ email: args.email, orgName: args.org || undefined })
      else if (args.org) say.warn(`--org ignored: ${user.email} already belongs to an org`)
      const org = (await admin.getOrg(user.org_id))!
      if (user.disabled) say.warn(`${user.email} is disabled: its keys answer 403 until it is enabled again`)
      const { key, record } = await admin.issueKey({ userId: user.id, label: args.label || undefined, creditLimit, management: args.management === true })
      const credits = await admin.getCredits(org.id)
      if (args.json) {
        outJson({
          key,
          hash: record.hash,
          label: record.label,
          management: record.management === true,
          credit_limit: record.credit_limit,
          created_at: record.created_at,
          expires_at: record.expires_at,
          user_created: created,
          user: { id: user.id, email: user.email },
          org: { id: org.id, name: org.name },
          credits,
          storage: cli.storageNote,
        })
        return
      }
      if (cli.storageFlag) say.info(`Records: ${cli.storageNote}${cli.secretSource === 'app' ? `; secret from ${cli.secretFrom}` : ''}.`)
      if (created) say.success(`Created user ${user.email} in a new org "${org.name}".`)
      const limit = record.credit_limit === null ? '' : `, credit limit ${eur(record.credit_limit)}`
      say.info(`${record.management ? 'Management key' : 'API key'} "${record.label}" for ${user.email}${limit}; shown only now, keep it safe:`)
      out(key)
      if (record.expires_at) say.info(`It expires at ${record.expires_at}.`)
      if (Number(credits.balance) <= 0)
        say.info(
          `The org has no credits yet, so chat requests answer 402. Add some:  model-gateway credits add --email ${user.email} --amount 10${flagsOf(cli)}`,
        )
    })
  },
})

const status = (key: ApiKeyRecord, now: number) =>
  key.revoked
    ? 'revoked'
    : key.disabled
      ? 'disabled'
      : key.expires_at && Date.parse(key.expires_at) <= now
        ? 'expired'
        : key.management
          ? 'active (management)'
          : 'active'

const list = defineCommand({
  meta: { name: 'list', description: 'List a user’s keys (hashes and labels; keys themselves are never stored)' },
  args: { ...emailArg, ...jsonArg, ...configArg, ...dataArg, ...storageArgs },
  async run({ args }) {
    await withGateway({ command: 'keys', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const user = await requireUser(cli, args.email)
      const keys = await cli.gateway.admin.listKeys(user.id)
      const now = cli.gateway.context.now()
      if (args.json) return outJson(keys.map((key) => ({ ...key, status: status(key, now) })))
      if (!keys.length) return say.info(`${user.email} has no keys; issue one with: model-gateway keys create --email ${user.email}${flagsOf(cli)}`)
      out(
        table([
          ['HASH', 'LABEL', 'STATUS', 'CREATED', 'LAST USED', 'CREDIT LIMIT'],
          ...keys.map((key) => [
            key.hash,
            key.label,
            status(key, now),
            key.created_at,
            key.last_used ?? '-',
            key.credit_limit === null ? '-' : eur(key.credit_limit),
          ]),
        ]),
      )
    })
  },
})

const revoke = defineCommand({
  meta: { name: 'revoke', description: 'Revoke a key, given the key itself or its hash (from keys list): it answers 401 from then on' },
  args: {
    key: { type: 'positional', required: true, valueHint: 'key-or-hash', description: 'The key (sk-…) or its SHA-256 hash' },
    ...jsonArg,
    ...configArg,
    ...dataArg,
    ...storageArgs,
  },
  async run({ args }) {
    await withGateway({ command: 'keys', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const before = await cli.gateway.context.accounts.getKey(args.key.trim())
      if (!before) throw new CliError(`no such key (storage: ${cli.storageNote}); give the key itself or its full hash from: model-gateway keys list --email …`)
      const record = await cli.gateway.admin.revokeKey(before.hash)
      const user = await cli.gateway.admin.getUser(record.user_id)
      if (args.json) return outJson({ ...record, already_revoked: before.revoked, email: user?.email ?? null })
      const whose = `key ${record.hash} ("${record.label}") of ${user?.email ?? `user ${record.user_id}`}`
      out(before.revoked ? `The ${whose} was already revoked at ${record.revoked_at}.` : `Revoked the ${whose}.`)
    })
  },
})

const setLimits = defineCommand({
  meta: { name: 'set-limits', description: 'Set a key’s tokens, spend and requests limits, given the key itself or its hash' },
  args: {
    key: { type: 'positional', required: true, valueHint: 'key-or-hash', description: 'The key (sk-…) or its SHA-256 hash' },
    ...trafficArgs,
    ...jsonArg,
    ...configArg,
    ...dataArg,
    ...storageArgs,
  },
  async run({ args }) {
    const limits = trafficFromFlags(args)
    requireSomeLimit(limits)
    await withGateway({ command: 'keys', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const before = await cli.gateway.context.accounts.getKey(args.key.trim())
      if (!before) throw new CliError(`no such key (storage: ${cli.storageNote}); give the key itself or its full hash from: model-gateway keys list --email …`)
      const record = await cli.gateway.admin.setKeyLimits(before.hash, limits)
      if (args.json) return outJson({ hash: record.hash, label: record.label, limits: trafficLimitsOf(record.traffic_limits) })
      out(`Limits of key ${record.hash} ("${record.label}"):`)
      out(trafficLines(record.traffic_limits))
    })
  },
})

/** `model-gateway keys`: create, list and revoke API keys, and set their limits. */
export const keysCommand = defineCommand({
  meta: { name: 'keys', description: 'Create, list and revoke API keys, and set their limits' },
  subCommands: { create, list, revoke, 'set-limits': setLimits },
})
