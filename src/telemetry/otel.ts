/*
 * OpenTelemetry through the host's own @opentelemetry/api (docs/operations.md#traces), an optional peer: loaded when
 * the runtime can require it and it is installed, else tracing is off. The API itself is a no-op until the host
 * registers an SDK. Only the few calls the gateway makes are typed here.
 */

/** A span, as the gateway uses one. */
export interface OtelSpan {
  setAttribute(key: string, value: string | number | boolean): unknown
  setAttributes(attributes: Record<string, string | number | boolean>): unknown
  setStatus(status: { code: number; message?: string }): unknown
  end(): void
}

/** The part of @opentelemetry/api the gateway calls. */
export interface OtelApi {
  trace: {
    getTracer(
      name: string,
      version?: string,
    ): {
      startSpan(name: string, options?: { kind?: number; attributes?: Record<string, string | number | boolean> }, context?: unknown): OtelSpan
    }
    setSpan(context: unknown, span: OtelSpan): unknown
  }
  context: { active(): unknown }
  propagation: { inject(context: unknown, carrier: Record<string, string>): void }
  SpanKind: { SERVER: number; CLIENT: number }
  SpanStatusCode: { OK: number; ERROR: number }
}

/** The host's @opentelemetry/api, or undefined where it cannot be loaded (not installed, or no `require` in this runtime). */
export function loadOtelApi(): OtelApi | undefined {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown; cwd?: () => string } }).process
  const nodeModule = host?.getBuiltinModule?.('node:module') as { createRequire(from: string): (id: string) => unknown } | undefined
  // workerd's nodejs_compat has node:module without a working directory (docs/edge.md#cloudflare-workers).
  if (!host || !nodeModule || typeof host.cwd !== 'function') return undefined
  // The application's copy first (the one its SDK registered with), then the one next to the gateway.
  for (const from of [`${host.cwd()}/`, import.meta.url]) {
    try {
      return nodeModule.createRequire(from)('@opentelemetry/api') as OtelApi
    } catch {
      // not installed there
    }
  }
  return undefined
}
