import { jsonResponse } from '../http/respond'
import { isStorageTimeout } from '../stores/storage-timeout'
import { version } from '../version'
import { defineRoute } from './define'

/** How long the readiness check waits for the storage. */
export const READINESS_STORAGE_TIMEOUT_MS = 2000

/**
 * GET /health: liveness (docs/operations.md#health-and-readiness): the process serves requests, or 503 when its
 * storage cannot recover without a restart (a PostgreSQL connection for life that failed), naming the fix.
 */
export const healthRoute = defineRoute({
  method: 'GET',
  path: '/health',
  operationId: 'getHealth',
  summary: 'Liveness: the gateway answers',
  tag: 'Meta',
  auth: 'none',
  status: 200,
  handler: ({ ctx, requestId }) => {
    const failure = ctx.storageLiveness.failure()
    if (!failure) return { status: 'ok', version }
    return jsonResponse({ status: 'failing', version, checks: { storage: { ok: false, error: failure } } }, 503, requestId)
  },
})

/**
 * GET /health/ready: readiness for a load balancer (docs/operations.md#health-and-readiness): the storage answers a
 * read within 2 s, at least one provider is configured and the settlements kept for retry are not near their bound
 * (with their journal writable); 503 with the failing checks otherwise (and while the
 * gateway drains, as every route). Errors are named, never the storage's own messages (they may hold a URL).
 */
export const readinessRoute = defineRoute({
  method: 'GET',
  path: '/health/ready',
  operationId: 'getReadiness',
  summary: 'Readiness: storage reachable, providers configured',
  tag: 'Meta',
  auth: 'none',
  status: 200,
  handler: async ({ ctx, requestId }) => {
    const storage = await ctx.probe.read(READINESS_STORAGE_TIMEOUT_MS).then(
      (ms) => ({ ok: true, latency_ms: Math.round(ms * 10) / 10 }),
      (error: unknown) => {
        // The storage's own message (a 503's cause), for the operator's log only.
        const cause = (error as Error).cause ?? error
        ctx.logger.warn('readiness: the storage did not answer', { request_id: requestId, error: (cause as Error).message ?? String(cause) })
        // The probe's own 2 s, or a shorter `storageTimeoutMs`, passed: both a timeout.
        return { ok: false, error: isStorageTimeout(error) || /within \d+ ms$/.test((error as Error).message) ? 'timeout' : 'unreachable' }
      },
    )
    const count = ctx.options.providers.length
    const providers = count > 0 ? { ok: true, count } : { ok: false, count, error: 'no provider is configured' }
    // Settlements kept while the storage failed are reported; they fail readiness only near their bound or when their
    // journal cannot be written (docs/operations.md#settlements-that-fail).
    const settlements = ctx.settlements.status()
    const ready = storage.ok && providers.ok && settlements.ok
    const body = { status: ready ? 'ready' : 'not_ready', checks: { storage, providers, settlements } }
    if (ready) return body
    return jsonResponse(body, 503, requestId)
  },
})
