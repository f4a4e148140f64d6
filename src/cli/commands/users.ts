import { defineCommand } from 'citty'
import type { SpendLimitsInput } from '../../admin'
import type { SpendLimits } from '../../stores/account-types'
import { limitsOf } from '../../billing/spend-limits-input'
import { table } from '../format'
import { configArg, dataArg, storageArgs, emailArg, jsonArg, out, outJson, requireUser, withGateway } from '../common'
import { usageError } from '../errors'
import { trafficArgs, trafficFlagList, trafficFromFlags, trafficLines } from '../traffic-flags'

// A flag's value, or null for `none` (the limit removed); undefined when the flag is absent (left as it is).
const flagValue = (value: string | undefined): string | null | undefined => (value === undefined ? undefined : value === 'none' ? null : value)

const PER = { daily: 'day', weekly: 'week', monthly: 'month' } as const

const creditLine = (limits: SpendLimits | undefined) => {
  const shown = limitsOf(limits)
  return table([
    ['  credit limit', shown.credit_limit === null ? 'none' : `${shown.credit_limit} EUR${shown.limit_reset ? ` per ${PER[shown.limit_reset]}` : ''}`],
  ])
}

const lines = (limits: SpendLimits | undefined) => `${creditLine(limits)}\n${trafficLines(limits)}`

const setLimits = defineCommand({
  meta: { name: 'set-limits', description: 'Set a user’s limits, or (with --end-users) those of each end user of its org' },
  args: {
    ...emailArg,
    'end-users': { type: 'boolean', description: 'Set the limits each end user of the user’s org has (the `user` field of its keys’ requests)' },
    'credit-limit': { type: 'string', valueHint: 'eur|none', description: 'Most they may spend, in EUR (exact decimal); none removes it' },
    'limit-reset': {
      type: 'string',
      valueHint: 'daily|weekly|monthly|none',
      description: 'The credit limit starts over each UTC day, week or month; none: never',
    },
    ...trafficArgs,
    ...jsonArg,
    ...configArg,
    ...dataArg,
    ...storageArgs,
  },
  async run({ args }) {
    const limits: SpendLimitsInput = {}
    const set = (field: keyof SpendLimitsInput, value: string | undefined) => {
      const v = flagValue(value)
      if (v === undefined) return
      ;(limits as Record<string, unknown>)[field] =
        v !== null && (field === 'requests_per_minute' || field === 'max_in_flight') && /^\d+$/.test(v) ? Number(v) : v
    }
    set('credit_limit', args['credit-limit'])
    set('limit_reset', args['limit-reset'])
    trafficFromFlags(args, limits as Record<string, unknown>)
    if (!Object.keys(limits).length) throw usageError(`name at least one limit: --credit-limit, --limit-reset, ${trafficFlagList}`)
    await withGateway({ command: 'users', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const user = await requireUser(cli, args.email)
      if (args['end-users']) {
        const org = await cli.gateway.admin.setEndUserLimits(user.org_id, limits)
        if (args.json) return outJson({ org: { id: org.id, name: org.name }, end_user_limits: limitsOf(org.end_user_limits) })
        out(`Limits of each end user of org "${org.name}" (${org.id}):`)
        return out(lines(org.end_user_limits))
      }
      const updated = await cli.gateway.admin.setUserLimits(user.id, limits)
      if (args.json) return outJson({ user: { id: updated.id, email: updated.email }, limits: limitsOf(updated) })
      out(`Limits of ${updated.email}:`)
      out(lines(updated))
    })
  },
})

const show = defineCommand({
  meta: { name: 'show', description: 'Show a user’s limits and those of its org’s end users' },
  args: { ...emailArg, ...jsonArg, ...configArg, ...dataArg, ...storageArgs },
  async run({ args }) {
    await withGateway({ command: 'users', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const user = await requireUser(cli, args.email)
      const org = (await cli.gateway.admin.getOrg(user.org_id))!
      if (args.json)
        return outJson({
          user: { id: user.id, email: user.email },
          limits: limitsOf(user),
          end_user_limits: org.end_user_limits ? limitsOf(org.end_user_limits) : null,
        })
      out(`Limits of ${user.email}:`)
      out(lines(user))
      out(`Limits of each end user of org "${org.name}" (${org.id}):`)
      out(lines(org.end_user_limits))
    })
  },
})

/** `model-gateway users`: a user's limits and its org's end users' (docs/cli.md). */
export const usersCommand = defineCommand({
  meta: { name: 'users', description: 'Set and show the limits of users and of their org’s end users' },
  subCommands: { 'set-limits': setLimits, show },
})
