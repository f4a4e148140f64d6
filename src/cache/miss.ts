import type { GatewayContext } from '../context'
import type { UsageRecord } from '../stores/usage'
import { CACHE_STATUS_HEADER, CACHE_TTL_HEADER, type CachePlan } from './plan'

/** How long a stored answer waits for its generation's usage record (a stream's is written once its body has closed). */
const RECORD_WAIT_MS = 5000
const RECORD_POLL_MS = 20

// The generation's usage record once written, or null after RECORD_WAIT_MS.
async function recordOf(ctx: GatewayContext, orgId: string, generationId: string): Promise<UsageRecord | null> {
  const until = Date.now() + RECORD_WAIT_MS
  for (;;) {
    const record = await ctx.usage.get(orgId, generationId)
    if (record || Date.now() >= until) return record
    await new Promise((resolve) => setTimeout(resolve, RECORD_POLL_MS))
  }
}

// Stores an answer that went out whole, once its generation's usage record says it succeeded (docs/cache.md#what-is-cached).
async function store(ctx: GatewayContext, plan: CachePlan, generationId: string, contentType: string, bytes: Buffer): Promise<void> {
  const record = await recordOf(ctx, plan.orgId, generationId)
  if (record?.status !== 'success' || record.cache_hit) return
  const { cache } = ctx.options
  const saved = await ctx.responseCache.save(
    plan.orgId,
    plan.hash,
    {
      parts: bytes.toString('utf8').split(generationId),
      content_type: contentType,
      generation_id: generationId,
      facts: {
        endpoint: record.endpoint,
        model: record.model,
        provider: record.provider,
        provider_name: record.provider_name,
        stream: record.stream,
        finish_reason: record.finish_reason ?? null,
        native_finish_reason: record.native_finish_reason ?? null,
      },
    },
    { ttlSeconds: plan.ttlSeconds, maxEntryBytes: cache.maxEntryBytes, maxBytesPerOrg: cache.maxBytesPerOrg },
  )
  if (saved !== 'stored') ctx.logger.warn('answer not cached', { generation_id: generationId, org_id: plan.orgId, reason: saved })
}

/**
 * The answer of a request the cache did not have, marked `MISS`, its bytes recorded as they go out: a 2xx answer
 * under a generation id, read to its end (never cut short, never over `cache.maxEntryBytes`), is stored in the
 * background once its usage record says it succeeded (docs/cache.md#what-is-cached).
 */
export function recordMiss(ctx: GatewayContext, plan: CachePlan, response: Response, requestId: string): Response {
  response.headers.set(CACHE_STATUS_HEADER, 'MISS')
  response.headers.set(CACHE_TTL_HEADER, String(plan.ttlSeconds))
  const generationId = response.headers.get('x-generation-id')
  const contentType = response.headers.get('content-type') ?? ''
  // Text answers only (JSON, SSE): the bytes of generated audio are not cached.
  const text = /json|event-stream/.test(contentType)
  if (response.status < 200 || response.status >= 300 || !generationId || !response.body || !text) return response
  const max = ctx.options.cache.maxEntryBytes
  const chunks: Buffer[] = []
  let size = 0
  const recorder = new TransformStream<Uint8Array | string, Uint8Array | string>({
    transform(chunk, controller) {
      if (size <= max) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        size += bytes.byteLength
        if (size <= max) chunks.push(Buffer.from(bytes))
        else chunks.length = 0
      }
      controller.enqueue(chunk)
    },
    flush() {
      if (size > max) return
      void store(ctx, plan, generationId, contentType, Buffer.concat(chunks)).catch((error) =>
        ctx.logger.warn('storing an answer in the cache failed', { request_id: requestId, error: String(error) }),
      )
    },
  })
  return new Response(response.body.pipeThrough(recorder) as ReadableStream<Uint8Array>, { status: response.status, headers: response.headers })
}
