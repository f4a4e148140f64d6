import type { Capability } from '../contracts'
import type { GenerationTags } from '../http/attribution'
import { keyOfItem, pageOfKeys, type PageOptions } from './credits'
import type { Kv } from './kv'

/**
 * One served request, as kept for GET /generation and the BYOK figures (append-only), with the request's app
 * attribution and grouping fields (docs/usage.md).
 */
export interface UsageRecord extends GenerationTags {
  id: string
  org_id: string
  user_id: string
  /** The end user the request was made for (the principal's `endUser`: OpenRouter's `user` field), else null (docs/usage.md#usage-per-user-and-per-end-user). */
  end_user?: string | null
  /** How the caller authenticated: a bearer key or the host's session (docs/usage.md#usage-per-user-and-per-end-user); absent on records written before it was kept: `key`. */
  via?: 'key' | 'session'
  key_hash: string
  endpoint: Capability
  model: string
  provider: string
  upstream_id: string | null
  stream: boolean
  status: 'success' | 'error' | 'cancelled'
  prompt_tokens: number
  completion_tokens: number
  cached_tokens: number
  cache_write_tokens: number
  reasoning_tokens: number
  /** True when the usage was estimated (a stream ended before the provider reported it; audio: see `billed_by`). */
  usage_estimated: boolean
  currency: string
  cost: string
  cost_eur: string
  is_byok: boolean
  upstream_inference_cost: string | null
  latency_ms: number
  attempts: number
  created_at: string
  /** BYOK: the credential that served it. */
  credential_id?: string
  /** BYOK: the estimated upstream cost in EUR (what the customer's provider charges them). */
  upstream_cost_eur?: string
  /** Audio: what the request was billed by (reported tokens, characters of input text, seconds of input audio). */
  billed_by?: 'tokens' | 'characters' | 'seconds'
  /** Speech: characters of the input text. */
  characters?: number
  /** Transcription: seconds of input audio (reported by the upstream, else measured or estimated by the gateway). */
  audio_seconds?: number
  /** Image generation: the images returned. */
  images?: number
  /** BYOK: counted against the period (served successfully), and whether it fell within the free allowance. */
  byok_counted?: boolean
  byok_free?: boolean
  /** The provider's display name when it served (what the response's `provider` said). */
  provider_name?: string
  /** Milliseconds from the start to the first chunk of a stream (whole answers: to the answer, as `latency_ms`). */
  first_token_ms?: number
  /** Chat: how the generation finished (the set of docs/chat.md#finish-reasons) and the provider's own reason. */
  finish_reason?: string | null
  native_finish_reason?: string | null
  /** Answered from the response cache (docs/cache.md#what-a-hit-costs), replaying the generation `cached_from`. */
  cache_hit?: boolean
  cached_from?: string
}

/** Where a generation's usage record is, by id: `generation-ids:<org>:<id>` (swept with the retention, docs/retention.md). */
export interface GenerationPointer {
  key: string
  created_at: string
}

// A record's key under `usage:<org>`: its time, then its id (time-ordered, unique).
const recordKeyOf = (record: UsageRecord) => `${Date.parse(record.created_at).toString().padStart(15, '0')}-${record.id}`

/**
 * The usage records store: one record per request, under the org, time-ordered; and, per generation id, a pointer to
 * its record, so that GET /generation reads one record and never lists the org's records.
 */
export function createUsageStore(kv: Kv) {
  return {
    /**
     * A record and its generation pointer as full storage keys and values (unique keys: no lock needed), for the
     * settlement to write in its own atomic step with the charge (src/billing/charge.ts).
     */
    /** The full key of a record's generation pointer (one of entriesOf's): it exists exactly when the record was written. */
    pointerKey: (record: UsageRecord): string => kv.key('generation-ids', record.org_id, record.id),
    entriesOf(record: UsageRecord): { key: string; value: unknown }[] {
      const key = recordKeyOf(record)
      const pointer: GenerationPointer = { key, created_at: record.created_at }
      return [
        { key: kv.key('usage', record.org_id, key), value: record },
        { key: kv.key('generation-ids', record.org_id, record.id), value: pointer },
      ]
    },
    /** The record of a generation of the org, or null (an unknown id, another org's, or one past the retention). */
    async get(orgId: string, id: string): Promise<UsageRecord | null> {
      const pointer = await kv.get<GenerationPointer>('generation-ids', orgId, id)
      return pointer ? kv.get<UsageRecord>('usage', orgId, pointer.key) : null
    },
    /** An org's records, oldest first; with `from`/`to` (epoch ms), only those created in [from, to). */
    async list(orgId: string, range?: { from: number; to: number }): Promise<UsageRecord[]> {
      const inRange = (key: string) => !range || (Number(key.slice(0, 15)) >= range.from && Number(key.slice(0, 15)) < range.to)
      const keys = (await kv.list('usage', orgId)).filter(inRange).sort()
      const records = await Promise.all(keys.map((k) => kv.get<UsageRecord>('usage', orgId, k)))
      return records.filter((r): r is UsageRecord => r !== null)
    },
    /**
     * One page of an org's records (PageOptions; `limits` bound its size). `after` names a generation: its place comes
     * from its generation pointer (kept a day longer than the record), else from the records' keys.
     */
    async page(orgId: string, options: PageOptions, limits: { defaultLimit: number; maxLimit: number }): Promise<UsageRecord[]> {
      const keys = await kv.list('usage', orgId)
      let afterKey: string | undefined
      if (options.after !== undefined) {
        const pointer = typeof options.after === 'string' && options.after ? await kv.get<GenerationPointer>('generation-ids', orgId, options.after) : null
        afterKey = pointer?.key ?? keyOfItem(keys, options.after)
      }
      const page = pageOfKeys(keys, options, { afterKey, ...limits })
      const records = await Promise.all(page.map((key) => kv.get<UsageRecord>('usage', orgId, key)))
      return records.filter((r): r is UsageRecord => r !== null)
    },
  }
}

/** The usage store's operations. */
export type UsageStore = ReturnType<typeof createUsageStore>
