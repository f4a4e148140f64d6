import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'
import { createRecords } from './records'
import { createResponseBytesStore } from './response-bytes'
import type { UsageRecord } from './usage'

/** The key prefix of cached answers (docs/cache.md#storage): `response-cache:<org>:<sha-256 of the request>`. */
export const RESPONSE_CACHE_PREFIX = 'response-cache'

/** The key prefix of each org's count of cached bytes: `response-cache-bytes:<org>` (docs/cache.md#limits). */
export const RESPONSE_CACHE_BYTES_PREFIX = 'response-cache-bytes'

/** The response cache's options (docs/cache.md#configuration). */
export interface ResponseCacheOptions {
  /** Cache every capability request that does not say `X-OpenRouter-Cache: false`. Default false: opt in per request, key or org. */
  enabled?: boolean
  /** How long an answer stays cached when the request names no TTL. Default 300 s. */
  ttlSeconds?: number
  /** The longest TTL a request, key or org may ask for. Default 86400 s (a day). */
  maxTtlSeconds?: number
  /** An answer larger than this (bytes as sent) is not cached. Default 1048576 (1 MiB). */
  maxEntryBytes?: number
  /** The most bytes an org's cached answers hold together: past it, new answers are not cached until some expire. Default 16777216 (16 MiB). */
  maxBytesPerOrg?: number
  /** What a hit costs, in EUR (an exact decimal), charged like a request. Default "0". */
  hitFee?: string
}

/** What a hit's usage record takes from the generation it replays. */
export type CachedFacts = Pick<UsageRecord, 'endpoint' | 'model' | 'provider' | 'provider_name' | 'stream' | 'finish_reason' | 'native_finish_reason'>

/** One cached answer: its bytes as sent, split where its generation id was (docs/cache.md#what-a-hit-replays). */
export interface CachedAnswer {
  /** The answer's bytes (UTF-8 text) split on its generation id: joined with a hit's new id, they are the hit's answer. */
  parts: string[]
  /** The answer's content type. */
  content_type: string
  /** The generation it was first served as. */
  generation_id: string
  facts: CachedFacts
  /** When it expires (epoch ms). */
  expires_at: number
  /** The bytes it counts against its org's bound. */
  bytes: number
}

/** Why an answer was not stored: over the size of one entry, or its org's cached bytes are at their bound. */
export type CacheSaved = 'stored' | 'too_large' | 'org_full'

/**
 * Cached answers per org (docs/cache.md#storage), each under its request's hash and kept until its TTL (storage that
 * expires records drops it by itself; elsewhere the sweep does), with the bytes of each org's counted through the
 * atomic layer (src/stores/response-bytes.ts, by the minute) so that instances sharing a storage keep one bound.
 */
export function createResponseCacheStore(options: { kv: Kv; atomic: AtomicOps; now: () => number }) {
  const { kv, atomic, now } = options
  const records = createRecords(kv.storage)
  const counts = createResponseBytesStore({ kv, atomic, now, prefix: RESPONSE_CACHE_BYTES_PREFIX, bucketMs: 60_000 })
  const key = (org: string, hash: string) => kv.key(RESPONSE_CACHE_PREFIX, org, hash)
  return {
    /** The org's live cached answer for a request hash, or null. */
    async get(org: string, hash: string): Promise<CachedAnswer | null> {
      const entry = await records.get<CachedAnswer>(key(org, hash))
      return entry && entry.expires_at > now() ? entry : null
    },
    /** The bytes the org's cached answers count now. */
    usedBytes: (org: string): Promise<number> => counts.used(org),
    /** Stores an answer for `ttlSeconds` when it fits `maxEntryBytes` and its org's `maxBytesPerOrg` (counted first, in one atomic step). */
    async save(
      org: string,
      hash: string,
      entry: Omit<CachedAnswer, 'expires_at' | 'bytes'>,
      limits: { ttlSeconds: number; maxEntryBytes: number; maxBytesPerOrg: number },
    ): Promise<CacheSaved> {
      const stored: CachedAnswer = { ...entry, expires_at: now() + limits.ttlSeconds * 1000, bytes: 0 }
      stored.bytes = Buffer.byteLength(JSON.stringify(stored))
      if (stored.bytes > limits.maxEntryBytes) return 'too_large'
      const room = await counts.hold(org, stored.bytes, stored.expires_at, limits.maxBytesPerOrg)
      if ('refused' in room) return 'org_full'
      try {
        await records.set(key(org, hash), stored, limits.ttlSeconds)
      } catch (error) {
        await counts.subtract(org, room.held).catch(() => undefined)
        throw error
      }
      return 'stored'
    },
  }
}

/** The response cache store's operations. */
export type ResponseCacheStore = ReturnType<typeof createResponseCacheStore>
