import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/** The key prefix of each org's count of stored-response bytes: `response-bytes:<org>` (docs/operations.md#what-the-storage-holds). */
export const RESPONSE_BYTES_PREFIX = 'response-bytes'

/** Bytes are counted by the hour in which they stop counting: an org's record holds at most one entry per hour of the retention. */
const HOUR_MS = 3_600_000

/** Bytes counted for an org until a time (epoch ms, the end of an hour): a request's room, or a stored response. */
export interface CountedBytes {
  bytes: number
  until: number
}

/** The outcome of asking for room: held (counted until its `until`), or refused with what the org's responses use. */
export type RoomAsked = { held: CountedBytes } | { refused: { used: number } }

// An org's record: bytes by the end (epoch ms, as text) of the hour they stop counting in.
interface ByteCounts {
  buckets: Record<string, number>
}

/** The end of the hour `at` falls in (`at` itself when it is one): bytes counted until `at` are counted until then. */
export const countedUntil = (at: number): number => Math.ceil(at / HOUR_MS) * HOUR_MS

// The buckets still counting at `now`.
function live(record: ByteCounts | null, now: number): Record<string, number> {
  const buckets: Record<string, number> = {}
  for (const [end, bytes] of Object.entries(record?.buckets ?? {})) if (Number(end) > now && bytes > 0) buckets[end] = bytes
  return buckets
}

const total = (buckets: Record<string, number>): number => Object.values(buckets).reduce((sum, bytes) => sum + bytes, 0)
const recordOf = (buckets: Record<string, number>): ByteCounts | null => (Object.keys(buckets).length ? { buckets } : null)

/**
 * The bytes of each org's stored responses (docs/responses.md#stored-responses), or with `prefix` and `bucketMs` (by the
 * minute) of its cached answers (docs/cache.md#limits), in one record per org changed only
 * through the atomic layer's read-modify-write, so that instances sharing a storage count exactly. Bytes stop counting
 * at the end of the hour their response expires in (nothing needs to subtract them then, on storage that expires
 * records by itself too); a delete subtracts them at once.
 */
export function createResponseBytesStore(options: { kv: Kv; atomic: AtomicOps; now: () => number; prefix?: string; bucketMs?: number }) {
  const { kv, atomic, now } = options
  const prefix = options.prefix ?? RESPONSE_BYTES_PREFIX
  const bucketMs = options.bucketMs ?? HOUR_MS
  const key = (org: string) => kv.key(prefix, org)
  // Adds (or, negative, subtracts) bytes in one step: a subtraction from a bucket already gone does nothing.
  const change = (org: string, changes: { counted: CountedBytes; sign: 1 | -1 }[]) =>
    atomic.update<ByteCounts>(key(org), (current) => {
      const buckets = live(current, now())
      for (const { counted, sign } of changes) {
        const end = String(counted.until)
        if (sign < 0 && buckets[end] === undefined) continue
        const next = (buckets[end] ?? 0) + sign * counted.bytes
        if (next > 0) buckets[end] = next
        else delete buckets[end]
      }
      return recordOf(buckets)
    })
  return {
    /** The bytes the org's stored responses and requests that may store one count now. */
    async used(org: string): Promise<number> {
      return total(live(await atomic.read<ByteCounts>(key(org)), now()))
    },
    /**
     * Holds `bytes` for the org until `until` when what it counts leaves room for them under `cap` (0: no cap), in one
     * atomic step: of concurrent requests, only those that fit together are held.
     */
    async hold(org: string, bytes: number, until: number, cap: number): Promise<RoomAsked> {
      const held: CountedBytes = { bytes, until: Math.ceil(until / bucketMs) * bucketMs }
      let used = 0
      let fits = true
      await atomic.update<ByteCounts>(key(org), (current) => {
        const buckets = live(current, now())
        used = total(buckets)
        fits = cap <= 0 || used + bytes <= cap
        if (!fits) return undefined
        buckets[held.until] = (buckets[held.until] ?? 0) + bytes
        return { buckets }
      })
      return fits ? { held } : { refused: { used } }
    },
    /** Counts a stored response's bytes in place of the room held for it (when still held), in one step. */
    async replace(org: string, held: CountedBytes | undefined, stored: CountedBytes): Promise<void> {
      await change(org, [...(held ? [{ counted: held, sign: -1 as const }] : []), { counted: stored, sign: 1 }])
    },
    /** Stops counting bytes (a request's room given back, a deleted response). */
    async subtract(org: string, counted: CountedBytes): Promise<void> {
      await change(org, [{ counted, sign: -1 }])
    },
  }
}

/** The stored-response byte counts' operations. */
export type ResponseBytesStore = ReturnType<typeof createResponseBytesStore>
