import { GatewayError } from '../errors'
import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/** The live keys of one org, as counted by the cap (docs/keys.md#how-many-keys-an-org-may-have). */
interface LiveCount {
  live: number
}

/** What the cap needs of the accounts store: the live keys of an org, read once when its count is first needed. */
export interface KeyCapOptions {
  kv: Kv
  atomic: AtomicOps
  /** Live keys an org may have at most. */
  max: number
  /** Counts an org's live (not revoked) keys from their records: the count of an org whose keys predate the cap. */
  countLive: (orgId: string) => Promise<number>
}

/** 403 naming the cap and how to make room. */
export function tooManyKeys(max: number): GatewayError {
  return new GatewayError(
    403,
    `This organisation already has ${max} live API keys, the most it may have (keys.maxPerOrg): delete keys it no longer needs (DELETE /api/v1/keys/{hash}) or revoke them to make room`,
    { metadata: { max_keys: max } },
  )
}

/**
 * The cap on live keys per org (docs/keys.md#how-many-keys-an-org-may-have): one counter record per org
 * (`key-count:<org>`), changed only through the atomic layer, so that concurrent issues on any number of instances
 * never pass it. A key counts from its issue until it is revoked (deleting revokes).
 */
export function createKeyCap({ kv, atomic, max, countLive }: KeyCapOptions) {
  const countKey = (orgId: string) => kv.key('key-count', orgId)

  /**
   * Makes sure the org's counter exists: a new org's (or one whose keys predate the cap) is counted once from its
   * records. Called before anything that changes the count, so that a count read while a key changes is never
   * written after that change was counted (the first writer wins; every later change goes through the counter).
   */
  async function ensure(orgId: string): Promise<void> {
    if (await atomic.read<LiveCount>(countKey(orgId))) return
    await atomic.setIfAbsent(countKey(orgId), { live: await countLive(orgId) } satisfies LiveCount)
  }

  return {
    ensure,
    /** Starts a new org's count at 0 (so that its first key needs no count from records). */
    async start(orgId: string): Promise<void> {
      await atomic.setIfAbsent(countKey(orgId), { live: 0 } satisfies LiveCount)
    },
    /** Counts one more live key of the org, or throws 403 when it already has `max` (nothing is counted then). */
    async claim(orgId: string): Promise<void> {
      await ensure(orgId)
      await atomic.update<LiveCount>(countKey(orgId), (count) => {
        const live = count?.live ?? 0
        if (live >= max) throw tooManyKeys(max)
        return { live: live + 1 }
      })
    },
    /** Counts one live key of the org less (a key revoked or deleted, or one whose issue failed after its claim). */
    async release(orgId: string): Promise<void> {
      await atomic.update<LiveCount>(countKey(orgId), (count) => (count ? { live: Math.max(0, count.live - 1) } : undefined))
    },
    /** The org's live keys as counted (0 before its first key). */
    async live(orgId: string): Promise<number> {
      return (await atomic.read<LiveCount>(countKey(orgId)))?.live ?? 0
    },
  }
}

/** The key cap's operations. */
export type KeyCap = ReturnType<typeof createKeyCap>
