import type { Kv } from './kv'

/** One served request, as kept for activity and BYOK figures (append-only). */
export interface UsageRecord {
  id: string
  org_id: string
  user_id: string
  key_hash: string
  endpoint: 'chat' | 'speech' | 'transcription'
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
  /** True when the tokens were estimated (the stream ended before the provider reported usage). */
  usage_estimated: boolean
  currency: string
  cost: string
  cost_eur: string
  is_byok: boolean
  upstream_inference_cost: string | null
  latency_ms: number
  attempts: number
  created_at: string
}

/** The usage records store: one record per request, under the org, time-ordered. */
export function createUsageStore(kv: Kv) {
  return {
    /** Appends a record (unique key: no lock needed). */
    async append(record: UsageRecord): Promise<void> {
      await kv.set(record, 'usage', record.org_id, `${Date.parse(record.created_at).toString().padStart(15, '0')}-${record.id}`)
    },
    /** An org's records, oldest first. */
    async list(orgId: string): Promise<UsageRecord[]> {
      const keys = (await kv.list('usage', orgId)).sort()
      const records = await Promise.all(keys.map((k) => kv.get<UsageRecord>('usage', orgId, k)))
      return records.filter((r): r is UsageRecord => r !== null)
    },
  }
}

/** The usage store's operations. */
export type UsageStore = ReturnType<typeof createUsageStore>
