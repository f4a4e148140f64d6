import type { H3Event } from 'h3'
import { echoedRequestIdOf } from './request-id'
import { addHeaders, headerOf } from './respond'

/*
 * CORS (docs/api.md#cors): the API answers browser preflights and lets pages of any origin (or of the
 * configured ones) read its answers, errors included. Without credentials: browser apps send a key in
 * Authorization (keys issued by PKCE are meant for them), not cookies, so `*` is safe. Only the session's trusted
 * origins (docs/first-party.md#cross-site-requests) get `Access-Control-Allow-Credentials`, each by its own name,
 * never with `*`.
 */

/** Request headers a page may send: the key, the body's type, OpenRouter's app attribution, the request id. */
export const CORS_ALLOW_HEADERS = ['Authorization', 'Content-Type', 'HTTP-Referer', 'X-Title', 'X-OpenRouter-Title', 'X-OpenRouter-Categories', 'X-Request-Id']
/** Response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = [
  'X-Request-Id',
  'X-Generation-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-OpenRouter-Cache-Status',
  'X-OpenRouter-Cache-TTL',
]
/** The API's methods. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS']
/** Seconds a browser may keep a preflight's answer (Chromium keeps at most 7,200, Firefox 86,400). */
export const CORS_MAX_AGE = 7200

/** The `cors` option of createGateway: off, or the origins allowed (default: any origin). */
export type CorsOption = false | { origins: string[] }

/**
 * The resolved option: any origin, a set of them, or off; `credentialed`: the origins whose pages may send the host's
 * session cookie (the session's trusted origins), answered with credentials.
 */
export type ResolvedCors = false | (({ any: true } | { any: false; origins: ReadonlySet<string> }) & { credentialed?: ReadonlySet<string> })

const EXPOSE = CORS_EXPOSE_HEADERS.join(', ')
const ALLOW_METHODS = CORS_METHODS.join(', ')
const ALLOW_HEADERS = CORS_ALLOW_HEADERS.map((h) => h.toLowerCase())
// A header name as RFC 9110 spells a token.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** Checks the `cors` option at creation: `false`, or `{ origins }` of `scheme://host[:port]` origins (`*` for any). */
export function resolveCors(option: CorsOption | undefined, credentialed?: ReadonlySet<string>): ResolvedCors {
  const withCredentials = credentialed?.size ? { credentialed } : {}
  if (option === undefined) return { any: true, ...withCredentials }
  if (option === false) return false
  if (!option || !Array.isArray(option.origins)) throw new TypeError('model-gateway: `cors` must be false or { origins: string[] }')
  const origins = new Set<string>()
  for (const origin of option.origins) {
    if (origin === '*') return { any: true, ...withCredentials }
    let parsed: URL | undefined
    try {
      parsed = typeof origin === 'string' ? new URL(origin) : undefined
    } catch {
      parsed = undefined
    }
    if (!parsed || parsed.origin === 'null' || parsed.origin !== origin.toLowerCase().replace(/\/$/, '')) {
      throw new TypeError(`model-gateway: cors.origins: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path)`)
    }
    origins.add(parsed.origin)
  }
  return { any: false, origins, ...withCredentials }
}

/** The `Access-Control-Allow-Origin` for a request from `origin`: `*`, the origin itself when listed, else none. */
function allowedOrigin(cors: Exclude<ResolvedCors, false>, origin: string | null): string | undefined {
  if (origin && cors.credentialed?.has(origin.toLowerCase())) return origin
  if (cors.any) return '*'
  return origin && cors.origins.has(origin.toLowerCase()) ? origin : undefined
}

// The credentials header of a session's trusted origin (its own name in Allow-Origin, never `*`), else nothing.
const credentialsFor = (cors: Exclude<ResolvedCors, false>, origin: string | undefined): Record<string, string> =>
  origin && origin !== '*' && cors.credentialed?.has(origin.toLowerCase()) ? { 'access-control-allow-credentials': 'true' } : {}

// Whether an answer depends on the request's Origin (a list of origins, or credentialed ones): caches must keep them apart.
const variesByOrigin = (cors: Exclude<ResolvedCors, false>) => !cors.any || (cors.credentialed?.size ?? 0) > 0

/** Sets headers on a response (addHeaders: a copy when its headers are immutable), and `vary` among its Vary. */
function withHeaders(response: Response, headers: Record<string, string>, vary?: string): Response {
  if (!vary) return addHeaders(response, headers)
  const current = headerOf(response, 'vary')
  const listed = current
    ?.toLowerCase()
    .split(/\s*,\s*/)
    .includes(vary.toLowerCase())
  return addHeaders(response, listed ? headers : Object.assign({}, headers, { vary: current ? `${current}, ${vary}` : vary }))
}

/** Adds the CORS headers of an API response (success or error) for the request's Origin. */
export function withCors(response: Response, event: H3Event, cors: ResolvedCors): Response {
  if (!cors) return response
  const origin = allowedOrigin(cors, event.req.headers.get('origin'))
  const headers: Record<string, string> = origin
    ? { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSE, ...credentialsFor(cors, origin) }
    : {}
  return withHeaders(response, headers, variesByOrigin(cors) ? 'Origin' : undefined)
}

/**
 * The answer to a preflight (`OPTIONS`): 204 with the allowed origin, methods, headers (the API's own, plus those the
 * browser asks for: SDKs add their own, such as `X-Stainless-*`, and without credentials that is safe) and how long
 * to keep it. An origin that is not allowed gets the 204 without them, and the browser then refuses the request.
 */
export function preflight(event: H3Event, cors: Exclude<ResolvedCors, false>): Response {
  const origin = allowedOrigin(cors, event.req.headers.get('origin'))
  const headers: Record<string, string> = { 'x-request-id': echoedRequestIdOf(event), 'cache-control': 'no-store' }
  if (origin) {
    const asked = (event.req.headers.get('access-control-request-headers') ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h && TOKEN.test(h) && !ALLOW_HEADERS.includes(h))
    Object.assign(headers, {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': ALLOW_METHODS,
      'access-control-allow-headers': [...CORS_ALLOW_HEADERS, ...asked].join(', '),
      'access-control-max-age': String(CORS_MAX_AGE),
      ...credentialsFor(cors, origin),
    })
  }
  return withHeaders(
    new Response(null, { status: 204, headers }),
    {},
    variesByOrigin(cors) ? 'Origin, Access-Control-Request-Headers' : 'Access-Control-Request-Headers',
  )
}
