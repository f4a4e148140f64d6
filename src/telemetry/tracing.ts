import { version } from '../version'
import { loadOtelApi, type OtelApi, type OtelSpan } from './otel'

/** The attributes a span takes. */
type Attributes = Record<string, string | number | boolean>

/**
 * The gateway's spans (docs/operations.md#traces): one per request (SERVER) and one per upstream attempt (CLIENT, a
 * child of the request's), with the GenAI semantic conventions (`gen_ai.*`) and the gateway's own attributes
 * (`model_gateway.*`); the attempt's context goes to the provider in `traceparent`. Never a prompt, an answer or a key.
 */
export function createTracing(api: OtelApi) {
  const tracer = api.trace.getTracer('model-gateway', version)
  return {
    /** Starts a request's span. */
    request(name: string, attributes: Attributes): OtelSpan {
      return tracer.startSpan(name, { kind: api.SpanKind.SERVER, attributes })
    },
    /** Starts an upstream attempt's span under the request's; `headers` carry its context to the provider. */
    attempt(parent: OtelSpan | undefined, name: string, attributes: Attributes): { span: OtelSpan; headers: Record<string, string> } {
      const parentContext = parent ? api.trace.setSpan(api.context.active(), parent) : api.context.active()
      const span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes }, parentContext)
      const headers: Record<string, string> = {}
      api.propagation.inject(api.trace.setSpan(parentContext, span), headers)
      return { span, headers }
    },
    /** Ends a span as succeeded or failed. */
    end(span: OtelSpan, failure?: { type: string; message: string }): void {
      if (failure) {
        span.setAttribute('error.type', failure.type)
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: failure.message })
      }
      span.end()
    },
  }
}

/** The gateway's tracing. */
export type Tracing = ReturnType<typeof createTracing>

/** Tracing through the host's @opentelemetry/api, when it can be loaded; `false` turns it off. */
export function tracingFor(option: false | undefined): Tracing | undefined {
  if (option === false) return undefined
  const api = loadOtelApi()
  return api ? createTracing(api) : undefined
}
