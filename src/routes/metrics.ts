import { safeEqual } from '../crypto/keys'
import { GatewayError } from '../errors'
import { gatewayResponse } from '../http/respond'
import { defineRoute, type RouteDefinition } from './define'

/** Prometheus's text exposition format, as prom-client serves it. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/**
 * GET /metrics (docs/operations.md#metrics), mounted with `metrics: { route: true }`: the gateway's metrics for a
 * Prometheus scraper; behind `Authorization: Bearer <bearerToken>` when one is configured (401 otherwise).
 */
export function createMetricsRoute(bearerToken?: string): RouteDefinition {
  return defineRoute({
    method: 'GET',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics of this instance',
    tag: 'Meta',
    auth: 'none',
    status: 200,
    handler: ({ ctx, event, requestId }) => {
      if (bearerToken !== undefined) {
        const given = /^Bearer (.+)$/i.exec(event.req.headers.get('authorization') ?? '')?.[1] ?? ''
        if (!safeEqual(given, bearerToken)) throw new GatewayError(401, 'GET /metrics needs the metrics bearer token in Authorization')
      }
      return gatewayResponse(ctx.metrics?.render() ?? '', 200, { 'content-type': METRICS_CONTENT_TYPE }, requestId)
    },
  }) as RouteDefinition
}
