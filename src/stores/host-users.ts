import { sha256Hex } from '../crypto/keys'
import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/**
 * Which gateway user a host user is (docs/first-party.md#host-users), claimed by the first instance that sees it: the
 * claimant creates the user (and its org, and grants its credits), then marks the claim ready.
 */
export interface HostUserClaim {
  user_id: string
  /** When the claim was taken (epoch ms): one left unfinished this long is taken over. */
  claimed_at: number
  /** Set once the credits a new org is granted were granted: a claim taken over does not grant them twice. */
  granted?: boolean
  /** Set once the user exists. */
  ready: boolean
}

/** The host users' claims in storage (`host-users:<sha256 of the host id>`). */
export function createHostUsersStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  const keyOf = (hostId: string) => kv.key('host-users', sha256Hex(hostId))
  return {
    /** The claim of a host user, or null when never seen. */
    read: (hostId: string): Promise<HostUserClaim | null> => atomic.read<HostUserClaim>(keyOf(hostId)),
    /** Claims a host user never seen: true when this caller is the first. */
    claim: (hostId: string, claim: HostUserClaim): Promise<boolean> => atomic.setIfAbsent(keyOf(hostId), claim),
    /** Takes over a claim still unfinished since `claimedAt` (its claimant died): true when this caller holds it now. */
    async takeOver(hostId: string, claimedAt: number, now: number): Promise<boolean> {
      let won = false
      await atomic.update<HostUserClaim>(keyOf(hostId), (current) => {
        won = current !== null && !current.ready && current.claimed_at === claimedAt
        return won ? { ...current!, claimed_at: now } : undefined
      })
      return won
    },
    /** Marks the claim's credits granted, or its user ready. */
    mark: (hostId: string, field: 'granted' | 'ready'): Promise<HostUserClaim | null> =>
      atomic.update<HostUserClaim>(keyOf(hostId), (current) => (current ? { ...current, [field]: true } : undefined)),
  }
}

/** The host users store's operations. */
export type HostUsersStore = ReturnType<typeof createHostUsersStore>
