import { defineCommand } from 'citty'
import { rulesView } from '../../policies/rules'
import type { RulesPatch } from '../../schemas/rules'
import type { Rules } from '../../stores/account-types'
import { CliError, usageError } from '../errors'
import { table } from '../format'
import { configArg, dataArg, storageArgs, emailArg, jsonArg, out, outJson, requireUser, withGateway } from '../common'

// `none` removes a rule; a comma-separated flag becomes a list.
const listFlag = (value: string | undefined): string[] | null | undefined =>
  value === undefined
    ? undefined
    : value === 'none'
      ? null
      : value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)

// `--max-price prompt=1,completion=2` (USD per million tokens; request, image each): OpenRouter's provider.max_price.
function maxPriceFlag(value: string | undefined): RulesPatch['max_price'] {
  if (value === undefined) return undefined
  if (value === 'none') return null
  const prices: Record<string, string> = {}
  for (const part of value.split(',')) {
    const [field, price] = part.split('=').map((s) => s.trim())
    if (!field || price === undefined) throw usageError(`--max-price: expected field=price pairs such as prompt=1,completion=2, not "${part}"`)
    prices[field] = price
  }
  return prices
}

// `--redact input|output|both|none`, with `--redact-kinds`.
function redactFlag(value: string | undefined, kinds: string | undefined): RulesPatch['redact'] {
  if (value === undefined) {
    if (kinds !== undefined) throw usageError('--redact-kinds goes with --redact input|output|both')
    return undefined
  }
  if (value === 'none') return null
  if (!['input', 'output', 'both'].includes(value)) throw usageError('--redact: expected input, output, both or none')
  const list = listFlag(kinds) ?? undefined
  return { input: value !== 'output', output: value !== 'input', ...(list ? { kinds: list as never } : {}) }
}

const lines = (rules: Rules | undefined) => {
  const view = rulesView(rules)
  const prices = view.max_price ? Object.entries(view.max_price).map(([field, price]) => `${field} ${price}`) : []
  return table([
    ['  allowed models', view.allowed_models?.join(', ') ?? 'any'],
    ['  allowed providers', view.allowed_providers?.join(', ') ?? 'any'],
    ['  max price (USD)', prices.length ? prices.join(', ') : 'none'],
    ['  zero data retention', view.enforce_zdr ? 'enforced' : 'not enforced'],
    ['  data collection', view.data_collection ?? 'not set'],
    [
      '  redact',
      view.redact
        ? `${[view.redact.input && 'input', view.redact.output && 'output'].filter(Boolean).join(' and ')}: ${view.redact.kinds.join(', ')}`
        : 'nothing',
    ],
  ])
}

const whoArgs = {
  ...emailArg,
  org: { type: 'boolean', description: 'The rules of the user’s org (all its users and keys)' },
  key: { type: 'string', valueHint: 'hash', description: 'The rules of one of the user’s keys (its hash, from keys list)' },
} as const

const set = defineCommand({
  meta: { name: 'set', description: 'Set the built-in rules of a user, of its org (--org) or of one of its keys (--key)' },
  args: {
    ...whoArgs,
    'allowed-models': { type: 'string', valueHint: 'ids|none', description: 'Models requests may name, comma-separated (vendor/* for all of a vendor’s)' },
    'allowed-providers': { type: 'string', valueHint: 'slugs|none', description: 'Providers requests may be routed to, comma-separated' },
    'max-price': { type: 'string', valueHint: 'prompt=1,completion=2|none', description: 'USD per million prompt/completion tokens, per request, per image' },
    'enforce-zdr': { type: 'string', valueHint: 'true|false', description: 'Only providers that retain no prompts' },
    'data-collection': { type: 'string', valueHint: 'deny|allow|none', description: 'deny: only providers that train on no prompts' },
    redact: { type: 'string', valueHint: 'input|output|both|none', description: 'Redact personal data in what is sent, answered, or both' },
    'redact-kinds': { type: 'string', valueHint: 'email,phone,card,iban', description: 'The kinds to redact. Default: all' },
    ...jsonArg,
    ...configArg,
    ...dataArg,
    ...storageArgs,
  },
  async run({ args }) {
    const patch: RulesPatch = {}
    const zdr = args['enforce-zdr']
    if (zdr !== undefined && zdr !== 'true' && zdr !== 'false') throw usageError('--enforce-zdr: expected true or false')
    const collection = args['data-collection']
    const fields: RulesPatch = {
      allowed_models: listFlag(args['allowed-models']),
      allowed_providers: listFlag(args['allowed-providers']),
      max_price: maxPriceFlag(args['max-price']),
      enforce_zdr: zdr === undefined ? undefined : zdr === 'true',
      data_collection: collection === undefined ? undefined : collection === 'none' ? null : (collection as 'deny'),
      redact: redactFlag(args.redact, args['redact-kinds']),
    }
    for (const [field, value] of Object.entries(fields)) if (value !== undefined) (patch as Record<string, unknown>)[field] = value
    if (!Object.keys(patch).length)
      throw usageError('name at least one rule: --allowed-models, --allowed-providers, --max-price, --enforce-zdr, --data-collection or --redact')
    if (args.org && args.key) throw usageError('--org and --key: give one of them')
    await withGateway({ command: 'rules', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const { admin } = cli.gateway
      const user = await requireUser(cli, args.email)
      let rules: Rules | undefined
      let whose: string
      if (args.key) {
        const key = await cli.gateway.context.accounts.getKey(args.key.trim())
        if (!key || key.user_id !== user.id)
          throw new CliError(`no key ${args.key} of ${user.email}; list them with: model-gateway keys list --email ${user.email}`)
        rules = (await admin.setKeyRules(key.hash, patch)).rules
        whose = `key ${key.hash}`
      } else if (args.org) {
        const org = await admin.setOrgRules(user.org_id, patch)
        rules = org.rules
        whose = `org "${org.name}"`
      } else {
        rules = (await admin.setUserRules(user.id, patch)).rules
        whose = user.email
      }
      if (args.json) return outJson({ rules: rulesView(rules) })
      out(`Rules of ${whose}:`)
      out(lines(rules))
    })
  },
})

const show = defineCommand({
  meta: { name: 'show', description: 'Show the built-in rules of a user’s org, of the user, and of its keys' },
  args: { ...emailArg, ...jsonArg, ...configArg, ...dataArg, ...storageArgs },
  async run({ args }) {
    await withGateway({ command: 'rules', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const user = await requireUser(cli, args.email)
      const org = (await cli.gateway.admin.getOrg(user.org_id))!
      const keys = (await cli.gateway.admin.listKeys(user.id)).filter((key) => !key.revoked)
      if (args.json)
        return outJson({
          org: rulesView(org.rules),
          user: rulesView(user.rules),
          keys: Object.fromEntries(keys.map((key) => [key.hash, rulesView(key.rules)])),
        })
      out(`Rules of org "${org.name}":`)
      out(lines(org.rules))
      out(`Rules of ${user.email}:`)
      out(lines(user.rules))
      for (const key of keys.filter((k) => k.rules)) {
        out(`Rules of key ${key.hash} ("${key.label}"):`)
        out(lines(key.rules))
      }
    })
  },
})

/** `model-gateway rules`: the built-in rules of orgs, users and keys (docs/policies.md#built-in-rules). */
export const rulesCommand = defineCommand({
  meta: { name: 'rules', description: 'Set and show the built-in rules (allowlists, max price, data policy, redaction) of orgs, users and keys' },
  subCommands: { set, show },
})
