import { isRedisDriver } from './atomic-redis'
import type { Kv } from './kv'
import { RESPONSES_PREFIX } from './responses'
import { RESPONSE_CACHE_PREFIX } from './response-cache'
import { REVOKED_KEYS_PREFIX } from './revoked-keys'
import { ROLLUP_PREFIX } from './rollups'

/** The kinds of records the sweep removes once expired (docs/retention.md). */
export type SweepKind =
  | 'rate_limit_windows'
  | 'codes'
  | 'consent_answers'
  | 'byok_request_counters'
  | 'end_user_counters'
  | 'usage_records'
  | 'generation_ids'
  | 'usage_rollups'
  | 'stored_responses'
  | 'revoked_keys'
  | 'cached_answers'

/** The key prefix (below the gateway's storage prefix) of each kind of expiring record. */
const PREFIXES: Record<SweepKind, string> = {
  rate_limit_windows: 'ratelimit',
  codes: 'codes',
  consent_answers: 'consent-used',
  byok_request_counters: 'byok-requests',
  end_user_counters: 'credits:end-user',
  usage_records: 'usage',
  generation_ids: 'generation-ids',
  usage_rollups: ROLLUP_PREFIX,
  stored_responses: RESPONSES_PREFIX,
  revoked_keys: REVOKED_KEYS_PREFIX,
  cached_answers: RESPONSE_CACHE_PREFIX,
}

/**
 * The records of each kind the sweep removes (docs/retention.md), by key relative to the kind's prefix. The kinds are
 * listed through `listing` (the Kv without the storage's time bound: listing every usage record of a large store may
 * take longer than one wait; the sweep runs in the background, and close() does not wait for it).
 */
export function createExpiringStore(kv: Kv, listing: Kv = kv) {
  return {
    /** True when the storage mounted where a kind's records live expires records by itself (Redis). */
    expiresByItself: (kind: SweepKind): boolean => isRedisDriver(kv.storage.getMount(kv.key(PREFIXES[kind])).driver),
    /**
     * The keys of a kind's records, relative to its prefix (`usage_records`: `<org>:<15-digit ms>-<id>`; `revoked_keys`:
     * `<15-digit ms>-<hash>`, entries of the index of revoked keys, src/stores/revoked-keys.ts).
     */
    list: (kind: SweepKind): Promise<string[]> => listing.list(PREFIXES[kind]),
    /** Reads one record, or null. */
    read: (kind: SweepKind, key: string): Promise<unknown> => kv.get<unknown>(PREFIXES[kind], key),
    /** Removes one record. */
    remove: (kind: SweepKind, key: string): Promise<void> => kv.remove(PREFIXES[kind], key),
  }
}

/** The expiring records store's operations. */
export type ExpiringStore = ReturnType<typeof createExpiringStore>
