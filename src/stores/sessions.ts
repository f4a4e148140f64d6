import type { H3Event } from 'h3'
import type { AccountsStore } from './accounts'
import type { CreditsStore } from './credits'
import type { HostUserClaim, HostUsersStore } from './host-users'
import type { Principal } from './account-types'
import type { Logger } from '../logger'
import { newId } from '../crypto/keys'
import { GatewayError, notFound } from '../errors'
import { toUnits } from '../billing/money'

/** The host's signed-in user as its session names it (docs/first-party.md#session-principals). */
export interface SessionUser {
  /** The host's own id of the user: stable and unique (at most 256 characters). */
  id: string
  /** Its email, kept on the gateway user when no other user has it. */
  email?: string
}

/** Where a host user seen for the first time is placed (docs/first-party.md#host-users). */
export interface NewSessionUser {
  /** An existing org it joins; default: a new org of its own, named `orgName` (default: its email, or its host id). */
  orgId?: string
  orgName?: string
  /** Its plan. Default `defaultPlan`. */
  plan?: string
  /** EUR granted to its new org (an exact decimal; not to an existing org). Default "0". */
  credits?: string
}

/** The host's side of session principals: who is signed in, and where a new user goes (the `session` option). */
export interface SessionSource {
  user: (event: H3Event) => SessionUser | string | null | undefined | Promise<SessionUser | string | null | undefined>
  onNewUser?: (user: SessionUser) => NewSessionUser | undefined | Promise<NewSessionUser | undefined>
}

/** The principals of the host's own users (docs/first-party.md): from a request's session, a host user, or a user id. */
export interface Sessions {
  /** The principal of the user the host's session signs in for `event`; null when none, or no `session` option. */
  fromEvent(event: H3Event): Promise<Principal | null>
  /** The user the host's session names for `event` (not yet looked up); null when none, or no `session` option. */
  hostUserOf(event: H3Event): Promise<SessionUser | string | null>
  /** The principal of a host user, created on first use (docs/first-party.md#host-users). */
  ofHostUser(user: SessionUser | string): Promise<Principal>
  /** The principal of a gateway user by its id, acting through its session key. */
  ofUserId(userId: string): Promise<Principal>
}

/** How long a claimant may take to create a host user before another instance takes its claim over. */
const CLAIM_STALE_MS = 30_000
/** How long a request waits for another instance creating the same host user. */
const CLAIM_WAIT_MS = 5_000
/** Host ids remembered per process (host id → gateway user id never changes once made). */
const MAX_REMEMBERED = 10_000
const MAX_HOST_ID = 256

interface SessionsDeps {
  /** The `session` option; undefined when the host has none. */
  session?: SessionSource
  accounts: AccountsStore
  credits: CreditsStore
  hostUsers: HostUsersStore
  now: () => number
  logger: Logger
}

// A host user as the session option or a caller gives it: an id (1–256 characters), an optional email.
function hostUserOf(value: SessionUser | string): SessionUser {
  const user = typeof value === 'string' ? { id: value } : value
  if (!user || typeof user.id !== 'string' || !user.id || user.id.length > MAX_HOST_ID)
    throw new TypeError(`model-gateway: a session user needs an id of 1 to ${MAX_HOST_ID} characters`)
  return user
}

/** Creates the session principals of one gateway (docs/first-party.md#session-principals). */
export function createSessions(deps: SessionsDeps): Sessions {
  const { accounts, hostUsers, now } = deps
  const remembered = new Map<string, string>()

  const ofUserId = async (userId: string): Promise<Principal> => {
    const principal = await accounts.resolveSessionUser(userId)
    if (!principal) throw notFound(`User ${userId} not found`)
    if (principal.user.disabled) throw new GatewayError(403, 'This account is disabled')
    return principal
  }

  // Creates the claimed user: its org (the hook's, or a new one), its credits once, then marks the claim ready.
  const create = async (user: SessionUser, claim: HostUserClaim): Promise<string> => {
    const placed: NewSessionUser = (await deps.session?.onNewUser?.(user)) ?? {}
    const grant = placed.credits === undefined ? 0n : toUnits(placed.credits, 'credits')
    if (!(await accounts.getUser(claim.user_id))) {
      const orgId = placed.orgId ?? `${claim.user_id}-org`
      if (!placed.orgId && !(await accounts.getOrg(orgId))) await accounts.createOrg({ id: orgId, name: placed.orgName ?? (user.email || `user ${user.id}`) })
      await accounts.createUser({ id: claim.user_id, hostId: user.id, email: user.email, orgId, plan: placed.plan })
      if (!placed.orgId && grant > 0n && !claim.granted) await deps.credits.add(orgId, placed.credits!, 'credits granted to a new host user')
    }
    await hostUsers.mark(user.id, 'granted')
    await hostUsers.mark(user.id, 'ready')
    deps.logger.info('a host user was seen for the first time: its gateway user was created', { user_id: claim.user_id })
    return claim.user_id
  }

  // The gateway user of a host user: the claim's when ready; else the first instance to claim it creates it, and the
  // others wait for it (a claimant that died is taken over).
  const userIdOf = async (user: SessionUser): Promise<string> => {
    const known = remembered.get(user.id)
    if (known) return known
    // Real time, not the gateway's clock (a test's clock may stand still): how long this request waits.
    const deadline = performance.now() + CLAIM_WAIT_MS
    for (;;) {
      const claim = await hostUsers.read(user.id)
      if (claim?.ready) return remember(user.id, claim.user_id)
      if (!claim) {
        const mine: HostUserClaim = { user_id: newId(), claimed_at: now(), ready: false }
        if (await hostUsers.claim(user.id, mine)) return remember(user.id, await create(user, mine))
        continue
      }
      if (now() - claim.claimed_at > CLAIM_STALE_MS && (await hostUsers.takeOver(user.id, claim.claimed_at, now())))
        return remember(user.id, await create(user, claim))
      if (performance.now() > deadline)
        throw new GatewayError(503, 'This user is being created by another request: retry in a moment', { headers: { 'retry-after': '1' } })
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  const remember = (hostId: string, userId: string) => {
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!)
    remembered.set(hostId, userId)
    return userId
  }

  const ofHostUser = async (value: SessionUser | string) => ofUserId(await userIdOf(hostUserOf(value)))

  return {
    ofUserId,
    ofHostUser,
    async hostUserOf(event) {
      const user = await deps.session?.user(event)
      return user === null || user === undefined || user === '' ? null : user
    },
    async fromEvent(event) {
      const user = await this.hostUserOf(event)
      return user === null ? null : ofHostUser(user) // a user without a usable id is the host's bug: a 500, logged
    },
  }
}
