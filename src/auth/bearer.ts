import type { H3Event } from 'h3'
import type { GatewayContext } from '../context'
import { GatewayError, unauthorized } from '../errors'
import type { Principal } from '../stores/account-types'

const BEARER_RE = /^Bearer[ \t]+(\S+)[ \t]*$/i

/** The key of an `Authorization: Bearer …` header (or, where the route takes it, `x-api-key`), or a 401 naming what is wrong. */
export function bearerKeyOf(event: H3Event, keyHeaders: 'x-api-key'[] = []): string {
  const header = event.req.headers.get('authorization')
  if (!header) {
    for (const name of keyHeaders) {
      const key = event.req.headers.get(name)?.trim()
      if (key) return key
    }
    throw unauthorized(
      keyHeaders.length
        ? `Missing API key: send "Authorization: Bearer <API_KEY>" or "${keyHeaders.join('" or "')}: <API_KEY>"`
        : 'Missing Authorization header: send "Authorization: Bearer <API_KEY>"',
    )
  }
  const match = BEARER_RE.exec(header)
  if (!match) throw unauthorized('Malformed Authorization header: expected "Bearer <API_KEY>"')
  return match[1]
}

/** Which keys a route takes (docs/keys.md): API keys (the default), management keys, or both. */
export type KeyKind = 'api' | 'management' | 'any'

/**
 * Authenticates the request's bearer key: 401 when missing, malformed, unknown, revoked, disabled or expired; 403 for
 * a disabled user, and for a key of the wrong kind: a management key anywhere but the key management routes (and
 * GET /key), an API key on them.
 */
export async function authenticate(event: H3Event, ctx: GatewayContext, kind: KeyKind = 'api', keyHeaders?: 'x-api-key'[]): Promise<Principal> {
  return authenticateKey(ctx, bearerKeyOf(event, keyHeaders), kind)
}

/** Authenticates an API key itself, as `authenticate` does a request's (the in-process client's key: docs/first-party.md). */
export async function authenticateKey(ctx: GatewayContext, key: string, kind: KeyKind = 'api'): Promise<Principal> {
  return checkedPrincipal(ctx, await ctx.accounts.resolveKey(key), kind)
}

/**
 * Authenticates the request's bearer key at once, with no promise, when the authentication cache answers (as
 * `authenticate`: throws the same errors); undefined when the key's records must be read (then `authenticate`).
 */
export function authenticateNow(event: H3Event, ctx: GatewayContext, kind: KeyKind = 'api', keyHeaders?: 'x-api-key'[]): Principal | undefined {
  const resolved = ctx.accounts.resolveKeyNow(bearerKeyOf(event, keyHeaders))
  return resolved === undefined ? undefined : checkedPrincipal(ctx, resolved, kind)
}

// The resolved key's principal when it may call a route taking keys of `kind`; else the 401 or 403.
function checkedPrincipal(ctx: GatewayContext, principal: Principal | null, kind: KeyKind): Principal {
  if (!principal) throw unauthorized('Invalid API key: unknown, revoked, disabled or expired')
  if (principal.user.disabled) throw new GatewayError(403, 'This account is disabled')
  const management = principal.key.management === true
  if (management && kind === 'api') throw new GatewayError(403, 'A management key only manages API keys (/keys): call this route with an API key')
  if (!management && kind === 'management') throw new GatewayError(403, 'Managing API keys needs a management key')
  touchThrottled(principal, ctx)
  return principal
}

// `last_used` is written at most once per interval per key and off the request's path.
function touchThrottled(principal: Principal, ctx: GatewayContext) {
  const lastTouched = ctx.lastKeyUse
  const now = ctx.now()
  const previous = lastTouched.get(principal.key.hash) ?? (principal.key.last_used ? Date.parse(principal.key.last_used) : 0)
  if (now - previous < ctx.options.lastUsedIntervalSeconds * 1000) return
  lastTouched.set(principal.key.hash, now)
  if (lastTouched.size > 10_000) lastTouched.delete(lastTouched.keys().next().value!)
  ctx.accounts.touchKey(principal.key).catch((error) => ctx.logger.warn('could not record key use', { error: String(error) }))
}
