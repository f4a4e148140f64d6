import type { IncomingMessage } from 'node:http'
import { fromUnits, toUnits } from '../src/billing/money'
import type { Gateway, SessionOptions, SpendLimitsInput } from '../src/index'

// The playground's team demo (docs/first-party.md, README "The playground"): two host users, Ada and Linus, sign in
// with the playground's own cookie, and the gateway's `session` option makes them gateway users of one team org, each
// with a budget of its own. Their pages chat with no key; the team's spend per user comes from admin.activity.

/** The demo team's org: one id, created on first start with its credits. */
export const TEAM_ORG_ID = 'playground-team'
/** The credits the team's org starts with, EUR. */
export const TEAM_CREDITS = '5'

/** A member of the demo team: the host's own id and email, and the budget its gateway user gets on first start. */
export interface TeamMember {
  hostId: string
  name: string
  email: string
  budget: SpendLimitsInput
}

/** The two demo members (docs/first-party.md#budgets-for-users-and-end-users). */
export const TEAM_MEMBERS: readonly TeamMember[] = [
  { hostId: 'ada', name: 'Ada', email: 'ada@example.com', budget: { credit_limit: '0.5', limit_reset: 'daily', requests_per_minute: 10 } },
  { hostId: 'linus', name: 'Linus', email: 'linus@example.com', budget: { credit_limit: '1', limit_reset: 'daily', requests_per_minute: 10 } },
]

/** The member of a host id, or undefined. */
export const teamMember = (hostId: string | null | undefined): TeamMember | undefined => TEAM_MEMBERS.find((m) => m.hostId === hostId)

/** The gateway's `session` option for the team demo: the member the cookie names, placed in the team's org when first seen. */
export function teamSession(hostIdOf: (cookieHeader: string | null) => string | null): SessionOptions {
  return {
    user: (event) => {
      const member = teamMember(hostIdOf(event.req.headers.get('cookie')))
      return member ? { id: member.hostId, email: member.email } : null
    },
    onNewUser: () => ({ orgId: TEAM_ORG_ID }),
  }
}

/** The team as the playground knows it once started: each member with its gateway user id. */
export type Team = Map<string, TeamMember & { userId: string }>

/**
 * Creates the team's org with its credits on first start, and its members as gateway users (as their first sign-in
 * would, through the in-process client) with their budgets, so that the budgets are there before anyone signs in.
 * Later starts leave the budgets as they are (the CLI or the admin API may have changed them).
 */
export async function ensureTeam(gateway: Gateway): Promise<Team> {
  const created = !(await gateway.admin.getOrg(TEAM_ORG_ID))
  if (created) {
    await gateway.admin.createOrg({ id: TEAM_ORG_ID, name: 'Demo team' })
    await gateway.admin.addCredits(TEAM_ORG_ID, TEAM_CREDITS, 'playground team credits')
  }
  const team: Team = new Map()
  for (const member of TEAM_MEMBERS) {
    const { user_id } = await gateway.client({ user: { id: member.hostId, email: member.email } }).identity()
    if (created) await gateway.admin.setUserLimits(user_id, member.budget)
    team.set(user_id, { ...member, userId: user_id })
  }
  return team
}

/** One row of the team's spend: a user, its requests and what they cost (EUR, exact decimal). */
export interface TeamSpendRow {
  user_id: string | null
  name: string
  email: string
  requests: number
  usage: string
}

/** The team's spend per user over the last 30 days (admin.activity grouped by user): every member, in order, then any other user. */
export async function teamSpend(gateway: Gateway, team: Team): Promise<TeamSpendRow[]> {
  const totals = new Map<string | null, { requests: number; units: bigint }>([...team.keys()].map((id) => [id, { requests: 0, units: 0n }]))
  for (const row of await gateway.admin.activity(TEAM_ORG_ID, { groupBy: 'user' })) {
    const id = row.user_id ?? null
    const total = totals.get(id) ?? { requests: 0, units: 0n }
    total.requests += row.requests
    total.units += toUnits(row.usage)
    totals.set(id, total)
  }
  return [...totals].map(([id, { requests, units }]) => {
    const member = id ? team.get(id) : undefined
    return { user_id: id, name: member?.name ?? '(other)', email: member?.email ?? '', requests, usage: fromUnits(units) }
  })
}

/**
 * True when a request that changes state comes from the playground's own pages, by the rules the gateway applies to
 * session requests (docs/first-party.md#cross-site-requests): the routes of the team demo are the host's own, so
 * they protect themselves.
 */
export function isSameSite(req: IncomingMessage, ownOrigin: string): boolean {
  const site = req.headers['sec-fetch-site']
  const origin = req.headers.origin
  if (site === 'same-origin' || site === 'none') return true
  if (!site && !origin) return true
  return origin === ownOrigin
}
