import type { Kv } from './kv'

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
}

/** Stored responses of the Responses API, per org, kept `retentionDays` and at most `maxBytes` of JSON each. */
export function createResponsesStore(options: { kv: Kv; now: () => number; retentionDays: number; maxBytes: number }) {
  const { kv, now } = options
  const key = (org: string, id: string) => kv.key(RESPONSES_PREFIX, org, id)
  const get = async (org: string, id: string): Promise<StoredResponse | null> => {
    const record = (await kv.storage.getItem(key(org, id))) as StoredResponse | null
    return record && record.expires_at > now() ? record : null
  }
  return {
    /** The most JSON bytes one stored response may hold. */
    maxBytes: options.maxBytes,
    /** Stores a response; false (nothing stored) when its record is over `maxBytes`. */
    async save(org: string, id: string, record: Omit<StoredResponse, 'expires_at'>): Promise<boolean> {
      const ttl = Math.ceil(options.retentionDays * 86_400)
      const stored: StoredResponse = { ...record, expires_at: now() + ttl * 1000 }
      if (Buffer.byteLength(JSON.stringify(stored)) > options.maxBytes) return false
      // Storage with expiry (Redis) drops it by itself; elsewhere the sweep does (docs/retention.md).
      await kv.storage.setItem(key(org, id), stored as never, { ttl })
      return true
    },
    /** The org's stored response, or null (unknown, another org's, deleted or expired). */
    get,
    /** Deletes the org's stored response; false when there was none. */
    async remove(org: string, id: string): Promise<boolean> {
      if (!(await get(org, id))) return false
      await kv.storage.removeItem(key(org, id))
      return true
    },
  }
}

/** The stored responses store's operations. */
export type ResponsesStore = ReturnType<typeof createResponsesStore>
