import type { GatewayContext } from '../context'
import type { SweepKind } from '../stores/expiring'
import { responseIdTime } from '../responses/ids'
import { rollupDayOfKey } from '../stores/rollups'
import { revokedEntryTime } from '../stores/revoked-keys'
import { endUserCounterExpiry } from '../billing/spend-limits'

export type { SweepKind }

/** How the sweep finds one kind of record and tells when it has expired. */
export interface ExpiryRule {
  /** The kind of records (their keys' prefix is the expiring store's, src/stores/expiring.ts). */
  kind: SweepKind
  /** True when a storage with its own expiry (Redis) removes these records by itself: the sweep skips them there. */
  expiresOnItsOwn?: boolean
  /** When the record under `key` (relative to the prefix) expires, in epoch ms; undefined when its key does not tell. */
  fromKey?(key: string): number | undefined
  /** Whether a record read from storage (under `key`) has expired at `now`; asked only when its key does not tell. */
  expiredRecord?(record: unknown, now: number, key: string): boolean
  /** Runs before the rule's records are listed, each sweep (the revoked keys' one-time index of keys revoked before it). */
  before?(): Promise<void>
  /** Removes an expired record with what goes with it, in place of the record alone; true when this call removed it. */
  remove?(key: string): Promise<boolean>
}

const DAY_MS = 86_400_000
/** A BYOK period's counter is kept this long past the period's end, for instances whose clocks lag. */
const PERIOD_GRACE_MS = DAY_MS

const lastPart = (key: string) => key.slice(key.lastIndexOf(':') + 1)
const digits = (text: string) => (/^\d+$/.test(text) ? Number(text) : Number.NaN)
const field = (record: unknown, name: string): unknown => (record && typeof record === 'object' ? (record as Record<string, unknown>)[name] : undefined)

/** Rate-limit windows `ratelimit:<scope>:<id>:<windowStart>`: over one second after their window ends (as their Redis TTL). */
function rateLimitRule(ctx: GatewayContext): ExpiryRule {
  return {
    kind: 'rate_limit_windows',
    expiresOnItsOwn: true,
    fromKey(key) {
      const scope = key.slice(0, key.indexOf(':')) as 'key' | 'org'
      const windowSeconds = ctx.options.rateLimits[scope]?.windowSeconds
      const start = digits(lastPart(key))
      return windowSeconds !== undefined && Number.isFinite(start) ? start + (windowSeconds + 1) * 1000 : undefined
    },
    // A window of a scope this instance does not limit: the local engine stamps `expires` on the process clock.
    expiredRecord: (record) => {
      const expires = field(record, 'expires')
      return typeof expires === 'number' && expires <= Date.now()
    },
  }
}

/** Authorization codes `codes:<hash>`: past their `expires_at`. */
function codesRule(): ExpiryRule {
  return {
    kind: 'codes',
    expiredRecord: (record, now) => {
      const expires = field(record, 'expires_at')
      return typeof expires === 'number' && expires <= now
    },
  }
}

/** Consent answers `consent-used:<jti>`: once the consent request they answered has expired, it cannot be replayed. */
function consentRule(ctx: GatewayContext): ExpiryRule {
  return {
    kind: 'consent_answers',
    expiredRecord: (record, now) => {
      const expires = field(record, 'expires_at')
      if (typeof expires === 'number') return expires <= now
      // Answers written before they carried `expires_at`: the request was signed before it was answered.
      const at = Date.parse(String(field(record, 'at')))
      return Number.isFinite(at) && at + ctx.options.auth.codeTtlSeconds * 1000 <= now
    },
  }
}

/** BYOK request counters `byok-requests:<org>:<YYYY-MM>`: a day after their period (a UTC month) ended. */
function byokCountersRule(): ExpiryRule {
  return {
    kind: 'byok_request_counters',
    fromKey(key) {
      const match = /^(\d{4})-(\d{2})$/.exec(lastPart(key))
      return match ? Date.UTC(Number(match[1]), Number(match[2]), 1) + PERIOD_GRACE_MS : undefined
    },
  }
}

/**
 * End users' windowed counters `credits:end-user:<org>:<hash>:<counter>` (docs/first-party.md#end-users): a while
 * after the window they counted ended (the storage's own expiry on Redis). The removal checks again in one atomic step,
 * so a counter that a request just started over for a new window stays.
 */
function endUserCountersRule(ctx: GatewayContext): ExpiryRule {
  return {
    kind: 'end_user_counters',
    expiresOnItsOwn: true,
    expiredRecord: (record, now, key) => {
      const expires = endUserCounterExpiry(lastPart(key), field(record, 'window'))
      return expires !== undefined && expires <= now
    },
    remove: (key) =>
      ctx.spendCounters.removeEndUserCounter(key, (record) => {
        const expires = endUserCounterExpiry(lastPart(key), field(record, 'window'))
        return expires !== undefined && expires <= ctx.now()
      }),
  }
}

/** Usage records `usage:<org>:<15-digit ms>-<id>`: older than the retention. */
function usageRule(ctx: GatewayContext): ExpiryRule {
  const retentionMs = ctx.options.retention.usageDays * DAY_MS
  return {
    kind: 'usage_records',
    fromKey(key) {
      const created = digits(lastPart(key).slice(0, 15))
      return Number.isFinite(created) ? created + retentionMs : undefined
    },
  }
}

/**
 * Generation pointers `generation-ids:<org>:<gen-<seconds>-…>` (docs/usage.md): a day longer than the retention after
 * the second their id names (when the request began), so never before their usage record; an id that names none, by
 * the `created_at` the pointer holds.
 */
function generationIdsRule(ctx: GatewayContext): ExpiryRule {
  const keptMs = ctx.options.retention.usageDays * DAY_MS + DAY_MS
  return {
    kind: 'generation_ids',
    fromKey(key) {
      const match = /^gen-(\d{1,12})-/.exec(lastPart(key))
      return match ? Number(match[1]) * 1000 + keptMs : undefined
    },
    expiredRecord: (record, now) => {
      const created = Date.parse(String(field(record, 'created_at')))
      return Number.isFinite(created) && created + keptMs <= now
    },
  }
}

/** Usage rollups `rollups:<org>:<YYYY-MM-DD>:…` (docs/usage.md): once their whole day is older than the retention. */
function rollupsRule(ctx: GatewayContext): ExpiryRule {
  const retentionMs = ctx.options.retention.usageDays * DAY_MS
  return {
    kind: 'usage_rollups',
    fromKey(key) {
      const day = rollupDayOfKey(key)
      return day ? Date.parse(`${day}T00:00:00Z`) + DAY_MS + retentionMs : undefined
    },
  }
}

/** Stored responses `responses:<org>:<resp_…>` (docs/responses.md): older than their retention, by the time their id names. */
function storedResponsesRule(ctx: GatewayContext): ExpiryRule {
  const retentionMs = ctx.options.retention.responsesDays * DAY_MS
  return {
    kind: 'stored_responses',
    expiresOnItsOwn: true,
    fromKey(key) {
      const created = responseIdTime(lastPart(key))
      return created === undefined ? undefined : created + retentionMs
    },
    expiredRecord: (record, now) => {
      const expires = field(record, 'expires_at')
      return typeof expires === 'number' && expires <= now
    },
  }
}

/**
 * Revoked and deleted API keys, by the entries of their index `revoked-keys:<15-digit ms>-<hash>` (when they were
 * revoked): `retention.revokedKeysDays` after, the record goes with everything kept about the key (docs/retention.md).
 */
function revokedKeysRule(ctx: GatewayContext): ExpiryRule {
  const keptMs = ctx.options.retention.revokedKeysDays * DAY_MS
  return {
    kind: 'revoked_keys',
    before: () => ctx.accounts.indexRevokedKeys(),
    fromKey(key) {
      const revoked = revokedEntryTime(key)
      return revoked === undefined ? undefined : revoked + keptMs
    },
    remove: (key) => ctx.accounts.removeRevokedKey(key),
  }
}

/** Cached answers `response-cache:<org>:<hash>` (docs/cache.md#storage): past their `expires_at` (their TTL). */
function cachedAnswersRule(): ExpiryRule {
  return {
    kind: 'cached_answers',
    expiresOnItsOwn: true,
    expiredRecord: (record, now) => {
      const expires = field(record, 'expires_at')
      return typeof expires === 'number' && expires <= now
    },
  }
}

/** Every rule the sweep applies, in the order it applies them. */
export function expiryRules(ctx: GatewayContext): ExpiryRule[] {
  return [
    rateLimitRule(ctx),
    codesRule(),
    consentRule(ctx),
    byokCountersRule(),
    endUserCountersRule(ctx),
    usageRule(ctx),
    generationIdsRule(ctx),
    rollupsRule(ctx),
    storedResponsesRule(ctx),
    revokedKeysRule(ctx),
    cachedAnswersRule(),
  ]
}

/** The id and org of a usage record from its key relative to `usage` (`<org>:<15-digit ms>-<id>`). */
export function usageKeyParts(key: string): { org: string; id: string } {
  const cut = key.lastIndexOf(':')
  return { org: key.slice(0, cut), id: key.slice(cut + 1).slice(16) }
}
