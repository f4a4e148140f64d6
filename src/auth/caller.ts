import type { H3Event } from 'h3'
import type { GatewayContext } from '../context'
import { assertSameSite } from '../http/cross-site'
import type { Principal } from '../stores/account-types'
import { authenticate, authenticateNow, type KeyKind } from './bearer'

// True when the request sends a key, in `Authorization` or a header the route takes: a key, when sent, wins.
const sendsKey = (event: H3Event, keyHeaders: 'x-api-key'[] | undefined) =>
  event.req.headers.has('authorization') || (keyHeaders?.some((name) => event.req.headers.has(name)) ?? false)

// True when the caller may be the host's signed-in user: the `session` option is on, the route takes API keys, and no key is sent.
const mayBeSession = (event: H3Event, ctx: GatewayContext, kind: KeyKind, keyHeaders: 'x-api-key'[] | undefined) =>
  Boolean(ctx.options.session) && kind !== 'management' && !sendsKey(event, keyHeaders)

/**
 * Who calls a route that needs a caller (docs/first-party.md#session-principals): the bearer key when one is sent;
 * else, with the `session` option, the host's signed-in user (a request that changes state must come from the site's
 * own pages: 403 otherwise); else the 401 of a missing key. The key management routes take a management key only.
 */
export async function callerOf(event: H3Event, ctx: GatewayContext, kind: KeyKind = 'api', keyHeaders?: 'x-api-key'[]): Promise<Principal> {
  if (mayBeSession(event, ctx, kind, keyHeaders)) {
    const user = await ctx.sessions.hostUserOf(event)
    if (user !== null) {
      assertSameSite(event, ctx.options.publicUrl, ctx.options.session!.trustedOrigins)
      return ctx.sessions.ofHostUser(user)
    }
  }
  return authenticate(event, ctx, kind, keyHeaders)
}

/**
 * The caller at once, with no promise, when the request sends a key the authentication cache knows (as `callerOf`:
 * the same errors); undefined when it must be read or the caller may be a session's user (then `callerOf`).
 */
export function callerNow(event: H3Event, ctx: GatewayContext, kind: KeyKind = 'api', keyHeaders?: 'x-api-key'[]): Principal | undefined {
  return mayBeSession(event, ctx, kind, keyHeaders) ? undefined : authenticateNow(event, ctx, kind, keyHeaders)
}
