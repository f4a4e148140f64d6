import { defineCommand } from 'citty'
import { trafficLimitsOf } from '../../billing/spend-limits-input'
import type { Org } from '../../stores/account-types'
import { configArg, dataArg, jsonArg, out, outJson, requireUser, storageArgs, withGateway } from '../common'
import type { CliGateway } from '../config'
import { CliError, usageError } from '../errors'
import { requireSomeLimit, trafficArgs, trafficFromFlags, trafficLines } from '../traffic-flags'

const orgArgs = {
  org: { type: 'string', valueHint: 'id', description: 'The org’s id' },
  email: { type: 'string', valueHint: 'email', description: 'Or the email address of one of its users' },
} as const

// The org named by --org, or that of the user --email names.
async function orgOf(cli: CliGateway, args: { org?: string; email?: string }): Promise<Org> {
  if (!args.org === !args.email) throw usageError('name the org: --org <id> or --email <a user of it>')
  const id = args.org ?? (await requireUser(cli, args.email!)).org_id
  const org = await cli.gateway.admin.getOrg(id)
  if (!org) throw new CliError(`no org ${id} (storage: ${cli.storageNote})`)
  return org
}

const setLimits = defineCommand({
  meta: { name: 'set-limits', description: 'Set an org’s tokens, spend and requests limits, over all its keys and users' },
  args: { ...orgArgs, ...trafficArgs, ...jsonArg, ...configArg, ...dataArg, ...storageArgs },
  async run({ args }) {
    const limits = trafficFromFlags(args)
    requireSomeLimit(limits)
    await withGateway({ command: 'orgs', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const org = await cli.gateway.admin.setOrgLimits((await orgOf(cli, args)).id, limits)
      if (args.json) return outJson({ org: { id: org.id, name: org.name }, limits: trafficLimitsOf(org.traffic_limits) })
      out(`Limits of org "${org.name}" (${org.id}):`)
      out(trafficLines(org.traffic_limits))
    })
  },
})

const show = defineCommand({
  meta: { name: 'show', description: 'Show an org’s tokens, spend and requests limits' },
  args: { ...orgArgs, ...jsonArg, ...configArg, ...dataArg, ...storageArgs },
  async run({ args }) {
    await withGateway({ command: 'orgs', config: args.config, data: args.data, storage: args.storage, nuxt: args.nuxt }, async (cli) => {
      const org = await orgOf(cli, args)
      if (args.json) return outJson({ org: { id: org.id, name: org.name }, limits: trafficLimitsOf(org.traffic_limits) })
      out(`Limits of org "${org.name}" (${org.id}):`)
      out(trafficLines(org.traffic_limits))
    })
  },
})

/** `model-gateway orgs`: an org's tokens, spend and requests limits (docs/cli.md). */
export const orgsCommand = defineCommand({
  meta: { name: 'orgs', description: 'Set and show an org’s tokens, spend and requests limits' },
  subCommands: { 'set-limits': setLimits, show },
})
