import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'
import { createRecords } from './records'
import { type CountedBytes, countedUntil, createResponseBytesStore, type RoomAsked } from './response-bytes'

/** The key prefix of stored responses (docs/operations.md#what-the-storage-holds): `responses:<org>:<id>`. */
export const RESPONSES_PREFIX = 'responses'

/** The most JSON bytes one stored response holds (its conversation and output; docs/responses.md#stored-responses). */
export const STORED_RESPONSE_MAX_BYTES = 4 * 1024 * 1024

/** A stored response (docs/responses.md#stored-responses): the response, and the conversation it continues. */
export interface StoredResponse {
  /** The Response object as it was answered (GET /responses/{id}). */
  response: Record<string, unknown>
  /** The input items of its request, those of `previous_response_id` first. */
  input: unknown[]
  /** Its output items, with what the next turn needs (reasoning signatures). */
  output: unknown[]
  /** When it expires (epoch ms). */
  expires_at: number
  /** The JSON bytes it counts against its org's cap (docs/responses.md#stored-responses); absent in records stored before the cap. */
  bytes?: number
}

/** The room a request that stores its response holds until it is stored or ends (docs/responses.md#stored-responses). */
export type HeldRoom = CountedBytes

/**
 * Stored responses of the Responses API, per org, kept `retentionDays` and at most `maxBytes` of JSON each; the bytes
 * of each org's are counted (src/stores/response-bytes.ts) and held under `maxBytesPerOrg` (0: no cap) before a
 * request that stores one is served, for at most `holdMs` (a request still running then is no longer held for).
 */
export function createResponsesStore(options: {
  kv: Kv
  atomic: AtomicOps
  now: () => number
  retentionDays: number
  maxBytes: number
  maxBytesPerOrg: number
  holdMs: number
}) {
  const { kv, atomic, now } = options
  const records = createRecords(kv.storage)
  const counts = createResponseBytesStore({ kv, atomic, now })
  const prefix = `${kv.key(RESPONSES_PREFIX)}:`
  const key = (org: string, id: string) => kv.key(RESPONSES_PREFIX, org, id)
  const get = async (org: string, id: string): Promise<StoredResponse | null> => {
    const record = (await records.get(key(org, id))) as StoredResponse | null
    return record && record.expires_at > now() ? record : null
  }
  // What a stored record counts: its bytes until the end of the hour it expires in.
  const countedOf = (record: StoredResponse | null): CountedBytes | undefined =>
    record && typeof record.bytes === 'number' && typeof record.expires_at === 'number'
      ? { bytes: record.bytes, until: countedUntil(record.expires_at) }
      : undefined
  return {
    /** The most JSON bytes one stored response may hold. */
    maxBytes: options.maxBytes,
    /** The most JSON bytes an org's stored responses may hold together (0: no cap). */
    maxBytesPerOrg: options.maxBytesPerOrg,
    /** The bytes the org's stored responses (and requests about to store one) count now. */
    usedBytes: (org: string): Promise<number> => counts.used(org),
    /** Holds room for `bytes` of the org's under its cap, atomically across instances; refused with what it uses when they do not fit. */
    hold: (org: string, bytes: number): Promise<RoomAsked> => counts.hold(org, bytes, now() + options.holdMs, options.maxBytesPerOrg),
    /** Gives back room held for a request that stored nothing. */
    release: (org: string, held: HeldRoom): Promise<void> => counts.subtract(org, held),
    /**
     * Stores a response, counting its bytes in place of the room `held` for it; false (nothing stored, the room given
     * back) when its record is over `maxBytes`.
     */
    async save(org: string, id: string, record: Omit<StoredResponse, 'expires_at' | 'bytes'>, held?: HeldRoom): Promise<boolean> {
      const ttl = Math.ceil(options.retentionDays * 86_400)
      const stored: StoredResponse = { ...record, expires_at: now() + ttl * 1000 }
      const bytes = Buffer.byteLength(JSON.stringify(stored))
      if (bytes > options.maxBytes) {
        if (held) await counts.subtract(org, held)
        return false
      }
      const counted = { bytes, until: countedUntil(stored.expires_at) }
      // Counted before it is written, so that the count never misses a stored response; uncounted if the write fails.
      await counts.replace(org, held, counted)
      try {
        // Storage with expiry (Redis) drops it by itself; elsewhere the sweep does (docs/retention.md).
        await records.set(key(org, id), { ...stored, bytes }, ttl)
      } catch (error) {
        await counts.subtract(org, counted).catch(() => undefined)
        throw error
      }
      return true
    },
    /** The org's stored response, or null (unknown, another org's, deleted or expired). */
    get,
    /** Deletes the org's stored response, its bytes no longer counted; false when there was none (of concurrent deletes, one is true). */
    async remove(org: string, id: string): Promise<boolean> {
      const record = await atomic.take<StoredResponse>(key(org, id))
      const counted = countedOf(record)
      if (counted) await counts.subtract(org, counted)
      return record !== null && record.expires_at > now()
    },
    /** Stops counting a stored response the default in-memory storage's bound deleted (its full key and record). */
    evicted(fullKey: string, record: unknown): Promise<void> {
      const counted = countedOf(record as StoredResponse | null)
      if (!counted || !fullKey.startsWith(prefix)) return Promise.resolve()
      return counts.subtract(fullKey.slice(prefix.length, fullKey.lastIndexOf(':')), counted)
    },
  }
}

/** The stored responses store's operations. */
export type ResponsesStore = ReturnType<typeof createResponsesStore>
