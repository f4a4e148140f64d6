import { applyRateLimits } from '../routing/rate-limit'
import type { GatewayContext } from '../context'
import { toGatewayError } from '../errors'
import { idHex } from '../crypto/id-bytes'
import { logFailure } from '../http/log-failure'
import { requestProviderKeys } from '../byok/request-keys'
import { type AnySchema, parseInput } from '../http/validate'
import type { Principal } from '../stores/account-types'
import type { Capability } from '../contracts'
import type { InProcessCallOptions } from './types'
import { type PolicyRun, runRequestPolicies } from '../policies/run'
import type { PolicyView } from '../policies/views'
import { policiesFor } from '../policies/redaction'

const VALID_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/
// The headers of a call that gives none: one object, only ever read.
const NO_HEADERS = new Headers()

// True for what the in-process client hands over as a stream (an async iterable), not a whole answer.
const isStream = (value: unknown): boolean => typeof value === 'object' && value !== null && Symbol.asyncIterator in value

/** What one in-process call serves with: its caller, its validated body, its abort, ids and headers. */
export interface InProcessInput<B> {
  principal: Principal
  body: B
  abort: AbortController
  requestId: string
  clientRequestId?: string
  headers: Headers
  /** Stops following the caller's signal: a stream calls it once it ended (a whole answer's call does it itself). */
  detach: () => void
  /** The host's policies once they ran on the request (docs/policies.md#policy-hooks). */
  policy?: PolicyRun
}

/** One operation of the in-process client: the route it stands for, its body's schema, and how it is served. */
export interface InProcessOperation<S extends AnySchema, R> {
  /** The HTTP route's path below the base path, as the request log and the spans name it. */
  path: string
  capability: Capability
  schema: S
  /** How the host's policies read and rewrite its body (as its route's). */
  view: PolicyView
  serve(input: InProcessInput<import('valibot').InferOutput<S>>): Promise<R>
}

/**
 * Runs one call of the in-process client as its HTTP route would (docs/first-party.md#the-in-process-client): refused
 * once the gateway closes, one request-log line and span, the caller resolved, the rate limits counted, the body
 * validated by the route's schema, then served; the caller's signal (and the gateway's drain deadline) aborts it.
 * Errors are thrown as GatewayError, the unexpected ones logged as the routes log them.
 */
export async function callInProcess<S extends AnySchema, R>(
  ctx: GatewayContext,
  operation: InProcessOperation<S, R>,
  principalOf: () => Promise<Principal>,
  body: unknown,
  options: InProcessCallOptions = {},
): Promise<R> {
  const requestId = `req_${idHex(12)}`
  const headers = options.headers ? new Headers(options.headers) : NO_HEADERS
  const incoming = options.headers ? headers.get('x-request-id') : null
  const clientRequestId = incoming && VALID_ID_RE.test(incoming) ? incoming : undefined
  const release = ctx.inFlight.admit()
  const ended = ctx.requestLog.begin(requestId, 'POST', ctx.options.basePath + operation.path, operation.path, operation.capability, clientRequestId)
  ctx.requestLog.note(requestId, { in_process: true })
  const abort = new AbortController()
  const { signal } = options
  const follow = () => abort.abort(signal?.reason)
  // A caller may pass one long-lived signal to many calls: each removes its listener once done with it.
  const detach = () => signal?.removeEventListener('abort', follow)
  const shutdown = ctx.inFlight.signal
  const stop = () => abort.abort(shutdown.reason)
  if (signal?.aborted) follow()
  signal?.addEventListener('abort', follow, { once: true })
  shutdown.addEventListener('abort', stop, { once: true })
  let status = 500
  try {
    const caller = await principalOf()
    // The caller's own provider keys for this call (docs/byok.md#keys-for-one-request), as the header says over HTTP.
    const providerKeys = options.headers ? requestProviderKeys(ctx, headers) : undefined
    const principal = providerKeys ? { ...caller, providerKeys } : caller
    ctx.requestLog.note(requestId, {
      org_id: principal.org.id,
      key: principal.key.hash.slice(0, 12),
      ...(principal.via === 'session' ? { user_id: principal.user.id } : {}),
    })
    await applyRateLimits(ctx, principal)
    let parsed = parseInput(operation.schema, body, 'body')
    // The host's policies, as on the route (docs/policies.md#policy-hooks): a deny throws before anything is held.
    let policy: PolicyRun | undefined
    const policies = policiesFor(ctx.options.policies, principal)
    if (policies.length > 0) {
      const ran = await runRequestPolicies({
        policies,
        capability: operation.capability,
        route: operation.path,
        principal,
        body: parsed as Record<string, unknown>,
        view: operation.view,
        requestId,
        logger: ctx.logger,
      })
      parsed = ran.body as typeof parsed
      policy = ran.run
    }
    const result = await operation.serve({ principal, body: parsed, abort, requestId, clientRequestId, headers, detach, policy })
    status = 200
    // A stream follows the caller's signal until it ends (it detaches then); a whole answer is done with it now.
    if (!isStream(result)) detach()
    return result
  } catch (error) {
    const thrown = toGatewayError(abort.signal.aborted && shutdown.aborted ? shutdown.reason : error, requestId)
    status = thrown.status
    logFailure(ctx.logger, `in-process ${operation.path}`, thrown, error, { requestId, clientRequestId })
    detach()
    throw thrown
  } finally {
    shutdown.removeEventListener('abort', stop)
    ctx.requestLog.note(requestId, { status })
    ended()
    release()
  }
}
