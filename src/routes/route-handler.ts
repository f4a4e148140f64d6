import { defineHandler, getQuery, getRouterParams, type EventHandler, type H3Event } from 'h3'
import { callerNow, callerOf } from '../auth/caller'
import { requestProviderKeys } from '../byok/request-keys'
import { applyRateLimits } from '../routing/rate-limit'
import type { GatewayContext } from '../context'
import { type ErrorBodyShape, errorResponse, toGatewayError } from '../errors'
import type { RouteDefinition } from './define'
import type { Principal } from '../stores/account-types'
import { readJsonBody, readRequestBody } from '../http/body'
import { abortRequest } from '../http/client-abort'
import { logFailure } from '../http/log-failure'
import { clientRequestIdOf, requestIdOf } from '../http/request-id'
import { addHeaders, jsonResponse, withRequestId } from '../http/respond'
import { preflight, withCors } from '../http/cors'
import { parseInput } from '../http/validate'
import { type PolicyRun, runRequestPolicies, withPolicyTrail } from '../policies/run'
import { generationTags } from '../http/attribution'
import { serveThroughCache } from '../cache/serve'
import { policiesFor } from '../policies/redaction'

// Header names in lowercase, as addHeaders takes them.
const lowercased = (headers: Record<string, string>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name in headers) out[name.toLowerCase()] = headers[name]
  return out
}

/** Answers an error thrown while serving `event` as the envelope (with its CORS headers), logging the unexpected ones. */
export function answerError(error: unknown, event: H3Event, ctx: GatewayContext, shape?: ErrorBodyShape): Response {
  const requestId = requestIdOf(event)
  const gatewayError = toGatewayError(error, requestId)
  logFailure(ctx.logger, `${event.req.method} ${event.url.pathname}`, gatewayError, error, { requestId, clientRequestId: clientRequestIdOf(event) })
  return withCors(echoRequestId(errorResponse(gatewayError, requestId, shape), event), event, ctx.options.cors)
}

// The response's X-Request-Id: the client's own id when it sent one (docs/errors.md#request-and-generation-ids).
function echoRequestId(response: Response, event: H3Event): Response {
  const client = clientRequestIdOf(event)
  return client ? addHeaders(response, { 'x-request-id': client }) : response
}

/**
 * Turns a route definition into a self-contained h3 handler: auth, validation, handler, response, errors, CORS. Each request
 * counts as in flight until its handler returns; once the gateway closes, new ones are refused with 503, and at the
 * drain deadline what a request started is aborted and it answers 503 (docs/operations.md).
 */
export function toRouteHandler(route: RouteDefinition, ctx: GatewayContext): EventHandler {
  const needsKey = route.auth === 'key' || (route.auth === 'public-catalogue' && !ctx.options.publicCatalogue)
  const bodyLimit = ctx.options.bodyLimits[route.bodyLimit ?? 'default']
  const shutdown = ctx.inFlight.signal
  return defineHandler(async (event) => {
    // A preflight reaching a route's own handler (mounted by the host on its path for every method).
    if (event.req.method === 'OPTIONS' && ctx.options.cors) return preflight(event, ctx.options.cors)
    const requestId = requestIdOf(event)
    let release: () => void
    try {
      release = ctx.inFlight.admit()
    } catch (error) {
      return answerError(error, event, ctx, route.errorBody)
    }
    const ended = ctx.requestLog.begin(requestId, event.req.method, event.url.pathname, route.path, route.capability, clientRequestIdOf(event))
    let status = 500
    let stopped = false
    const stop = () => {
      stopped = true
      abortRequest(event, shutdown.reason)
    }
    shutdown.addEventListener('abort', stop, { once: true })
    try {
      // At once when the authentication cache knows the key; awaited only when something must be read (no promise per request otherwise).
      const caller: Principal | null = needsKey
        ? (callerNow(event, ctx, route.keyKind, route.keyHeaders) ?? (await callerOf(event, ctx, route.keyKind, route.keyHeaders)))
        : null
      // A request served by a provider may bring its own provider keys, for it alone (docs/byok.md#keys-for-one-request).
      const providerKeys = caller && route.capability ? requestProviderKeys(ctx, event.req.headers) : undefined
      const principal = providerKeys ? { ...caller!, providerKeys } : caller
      if (principal)
        ctx.requestLog.note(requestId, {
          org_id: principal.org.id,
          key: principal.key.hash.slice(0, 12),
          ...(principal.via === 'session' ? { user_id: principal.user.id } : {}),
        })
      const limiting = principal ? applyRateLimits(ctx, principal) : undefined
      const limitHeaders = limiting ? await limiting : undefined
      const params = route.params ? parseInput(route.params, getRouterParams(event, { decode: true }), 'path') : undefined
      const query = route.query ? parseInput(route.query, getQuery(event), 'query') : undefined
      let body: unknown
      let form: unknown
      if (route.form) {
        const read = await readRequestBody(event, bodyLimit, { multipart: true })
        if (read.kind === 'form') form = parseInput(route.form, read.value, 'body')
        else if (route.body) body = parseInput(route.body, read.value, 'body')
      } else if (route.body) body = parseInput(route.body, await readJsonBody(event, bodyLimit), 'body')
      // The host's policies: a deny throws here, before anything is held or sent (docs/policies.md#policy-hooks).
      let policy: PolicyRun | undefined
      const policies = route.policyView && route.capability && principal ? policiesFor(ctx.options.policies, principal) : []
      if (policies.length > 0) {
        const subject = body !== undefined ? 'body' : 'form'
        const ran = await runRequestPolicies({
          policies,
          capability: route.capability!,
          route: route.path,
          principal: principal!,
          body: (subject === 'body' ? body : form) as Record<string, unknown>,
          view: route.policyView!,
          requestId,
          logger: ctx.logger,
        })
        if (subject === 'body') body = ran.body
        else form = ran.body
        policy = ran.run
      }
      const serve = () => route.handler({ event, ctx, requestId, principal, body, form, query, params, policy } as never)
      // A capability's JSON request may be answered from the response cache (docs/cache.md), keyed on the request as
      // the policies left it.
      const result =
        route.capability && principal && body !== undefined
          ? await serveThroughCache(
              ctx,
              {
                principal,
                route: route.path,
                headers: event.req.headers,
                body,
                requestId,
                tags: () => withPolicyTrail(generationTags(event, requestId, body), policy),
              },
              serve,
            )
          : await serve()
      let response = result instanceof Response ? withRequestId(result, requestId) : jsonResponse(result, route.status, requestId)
      if (limitHeaders) response = addHeaders(response, lowercased(limitHeaders))
      status = response.status
      return withCors(echoRequestId(response, event), event, ctx.options.cors)
    } catch (error) {
      // Stopped by the shutdown, a request fails as aborted, as a connection cut (502) or a retry given up: it says why.
      const answer = answerError(stopped ? shutdown.reason : error, event, ctx, route.errorBody)
      status = answer.status
      return answer
    } finally {
      shutdown.removeEventListener('abort', stop)
      ctx.requestLog.note(requestId, { status })
      ended()
      release()
    }
  })
}
