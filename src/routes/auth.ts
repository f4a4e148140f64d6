import type { H3Event } from 'h3'
import type { JWTPayload } from 'jose'
import * as v from 'valibot'
import { assertSafeCallbackUrl } from '../auth/callback-url'
import { renderConsentPage } from '../auth/consent-page'
import { verifierMatches } from '../auth/pkce'
import type { ChallengeMethod } from '../stores/codes'
import type { GatewayContext } from '../context'
import { newId, sha256Hex } from '../crypto/keys'
import { signToken, verifyToken } from '../crypto/tokens'
import { GatewayError, invalidRequest } from '../errors'
import { readBodyBytes } from '../http/body'
import { publicHref, publicOrigin } from '../http/public-url'
import { authorizationCodeSchema, authorizeQuerySchema, codeExchangeSchema, codeRequestSchema, issuedKeySchema } from '../schemas/auth'
import { defineRoute } from './define'
import { mintedKeyInput, mintTerms } from '../auth/mint'
import { fromUnits, toUnits } from '../billing/money'
import type { Principal } from '../stores/account-types'

const tag = 'Key issuance'
const CONSENT_AUDIENCE = 'model-gateway:consent'

/** The signed consent request carried from GET /auth to the consent page and its form. */
interface ConsentClaims extends JWTPayload {
  sub: string
  jti: string
  cb: string
  ch: string
  m: ChallengeMethod
  st?: string
  /** The credit limit the app asked for (EUR, canonical decimal). */
  lim?: string
}

const redirect = (location: string) => new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store' } })

async function signedInUser(ctx: GatewayContext, event: H3Event) {
  const id = await ctx.options.auth.resolveUser?.(event)
  if (!id) return null
  const user = await ctx.accounts.getUser(id)
  if (!user) return null
  if (user.disabled) throw new GatewayError(403, 'This account is disabled')
  return user
}

/** GET /auth: begins the browser authorization (docs/pkce.md#the-browser-flow): sign-in first, then consent. */
export const beginAuthRoute = defineRoute({
  method: 'GET',
  path: '/auth',
  operationId: 'beginAuthorization',
  summary: 'Begin the browser PKCE authorization: redirects to sign-in or consent',
  tag,
  auth: 'none',
  status: 302,
  query: authorizeQuerySchema,
  async handler({ ctx, query, event }) {
    const callback = assertSafeCallbackUrl(query.callback_url, ctx.options.auth.allowedCallbackOrigins)
    if (query.redirect_uri !== undefined && query.redirect_uri !== query.callback_url)
      throw invalidRequest('redirect_uri: must equal callback_url', 'redirect_uri')
    const user = await signedInUser(ctx, event)
    if (!user) {
      const { signInUrl, returnToParam } = ctx.options.auth
      if (!signInUrl) throw new GatewayError(403, 'Nobody is signed in, and this gateway has no sign-in page configured (auth.signInUrl)')
      const target = new URL(signInUrl, publicOrigin(ctx, event))
      target.searchParams.set(returnToParam, publicHref(ctx, event))
      return redirect(/^https?:\/\//.test(signInUrl) ? target.href : target.pathname + target.search)
    }
    const claims: ConsentClaims = {
      sub: user.id,
      jti: newId(),
      cb: callback.href,
      ch: query.code_challenge,
      m: query.code_challenge_method,
      ...(query.state !== undefined ? { st: query.state } : {}),
      ...(query.limit !== undefined ? { lim: fromUnits(toUnits(query.limit, 'limit')) } : {}),
    }
    const token = await signToken(ctx.consentKey, { ...claims }, { nowMs: ctx.now(), ttlSeconds: ctx.options.auth.codeTtlSeconds, audience: CONSENT_AUDIENCE })
    return redirect(`${ctx.options.basePath}/auth/consent?request=${encodeURIComponent(token)}`)
  },
})

async function readConsent(ctx: GatewayContext, event: H3Event, token: string | undefined) {
  const claims = token ? await verifyToken<ConsentClaims>(ctx.consentKey, token, { nowMs: ctx.now(), audience: CONSENT_AUDIENCE }) : null
  if (!claims) throw new GatewayError(400, 'This consent request is invalid or has expired: start again from the app', { param: 'request' })
  const user = await signedInUser(ctx, event)
  if (!user || user.id !== claims.sub) throw new GatewayError(403, 'This consent request belongs to another session: sign in and start again from the app')
  return { claims, user }
}

/** GET /auth/consent: the consent page (or the host's own) for a signed consent request. */
export const consentPageRoute = defineRoute({
  method: 'GET',
  path: '/auth/consent',
  operationId: 'showConsent',
  summary: 'The consent page of the browser authorization',
  tag,
  auth: 'none',
  status: 200,
  query: v.object({ request: v.pipe(v.string(), v.minLength(1)) }),
  responseType: 'text/html',
  async handler({ ctx, query, event, requestId }) {
    const { claims, user } = await readConsent(ctx, event, query.request)
    const appOrigin = new URL(claims.cb).origin
    const info = {
      appOrigin,
      callbackUrl: claims.cb,
      userEmail: user.email,
      formAction: `${ctx.options.basePath}/auth/consent`,
      request: query.request,
      ...(claims.lim ? { limit: claims.lim } : {}),
    }
    const page = await (ctx.options.auth.consentPage ?? renderConsentPage)(info)
    if (page instanceof Response) return page
    return new Response(page, {
      status: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${appOrigin}; frame-ancestors 'none'; base-uri 'none'`,
        'x-request-id': requestId,
      },
    })
  },
})

/** POST /auth/consent: the answer of the consent form; approve creates a code and returns to the app. */
export const answerConsentRoute = defineRoute({
  method: 'POST',
  path: '/auth/consent',
  operationId: 'answerConsent',
  summary: 'Approve or deny a browser authorization (form post)',
  tag,
  auth: 'none',
  status: 302,
  async handler({ ctx, event }) {
    const origin = event.req.headers.get('origin')
    const site = event.req.headers.get('sec-fetch-site')
    // Behind a proxy the browser's Origin is the public one (publicUrl), not the address the request reached.
    if ((origin && origin !== 'null' && origin !== event.url.origin && origin !== ctx.options.publicUrl) || site === 'cross-site') {
      throw new GatewayError(403, 'The consent form must be posted from this site')
    }
    const type = (event.req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase()
    if (type !== 'application/x-www-form-urlencoded') throw new GatewayError(415, 'Content-Type must be application/x-www-form-urlencoded')
    const bytes = await readBodyBytes(event, ctx.options.bodyLimits.default)
    const form = new URLSearchParams(bytes ? new TextDecoder().decode(bytes) : '')
    const decision = form.get('decision')
    if (decision !== 'approve' && decision !== 'deny') throw invalidRequest('decision: must be approve or deny', 'decision')
    const { claims } = await readConsent(ctx, event, form.get('request') ?? undefined)
    // A consent request is answered once: a replayed form is refused. The answer is kept until the request expires,
    // then swept (docs/retention.md).
    const expiresAt = claims.exp !== undefined ? claims.exp * 1000 : ctx.now() + ctx.options.auth.codeTtlSeconds * 1000
    const answer = { at: new Date(ctx.now()).toISOString(), expires_at: expiresAt }
    if (!(await ctx.consents.answerOnce(claims.jti, answer))) {
      throw new GatewayError(409, 'This consent request was already answered: start again from the app')
    }
    const callback = new URL(claims.cb)
    if (decision === 'approve') {
      const { code } = await ctx.codes.create({
        userId: claims.sub,
        challenge: claims.ch,
        method: claims.m,
        callbackOrigin: callback.origin,
        ...(claims.lim ? { limit: claims.lim } : {}),
      })
      callback.searchParams.set('code', code)
    } else {
      callback.searchParams.set('error', 'access_denied')
    }
    if (claims.st !== undefined) callback.searchParams.set('state', claims.st)
    return redirect(callback.href)
  },
})

/**
 * OpenRouter's `app_id` of a callback origin: a stable integer (the first 31 bits of its SHA-256, at least 1), the same
 * for every code of that app on every instance, without a table of apps.
 */
export const appIdOf = (origin: string): number => Number.parseInt(sha256Hex(origin).slice(0, 8), 16) & 0x7fffffff || 1

// A code created by a key mints a key bounded by that key (docs/keys.md). The answer is the seed's { code, created_at }
// with OpenRouter's { data: { id, app_id, created_at } } beside it (docs/pkce.md#creating-codes-with-a-key).
const createCode = async (ctx: GatewayContext, principal: Principal, body: v.InferOutput<typeof codeRequestSchema>) => {
  const callback = assertSafeCallbackUrl(body.callback_url, ctx.options.auth.allowedCallbackOrigins)
  const minted = await mintTerms(ctx, principal, body)
  const { code, created_at } = await ctx.codes.create({
    userId: principal.user.id,
    challenge: body.code_challenge,
    method: body.code_challenge_method,
    callbackOrigin: callback.origin,
    minted,
  })
  return { code, created_at, data: { id: code, app_id: appIdOf(callback.origin), created_at } }
}

/** POST /auth/keys/authorize: creates an authorization code for the caller (200, docs/api.md#success-statuses). */
export const authorizeRoute = defineRoute({
  method: 'POST',
  path: '/auth/keys/authorize',
  operationId: 'authorizeKeyCode',
  summary: 'Create an authorization code for the calling key’s user',
  tag,
  auth: 'key',
  status: 200,
  body: codeRequestSchema,
  response: authorizationCodeSchema,
  handler: ({ ctx, principal, body }) => createCode(ctx, principal, body),
})

/** POST /auth/keys/code: programmatic creation of an authorization code (200, as OpenRouter's clients require). */
export const createCodeRoute = defineRoute({
  method: 'POST',
  path: '/auth/keys/code',
  operationId: 'createKeyCode',
  summary: 'Create an authorization code programmatically',
  tag,
  auth: 'key',
  status: 200,
  body: codeRequestSchema,
  response: authorizationCodeSchema,
  handler: ({ ctx, principal, body }) => createCode(ctx, principal, body),
})

/** POST /auth/keys: exchanges a code and its verifier for a new API key (docs/pkce.md#the-exchange). */
export const exchangeCodeRoute = defineRoute({
  method: 'POST',
  path: '/auth/keys',
  operationId: 'exchangeKeyCode',
  summary: 'Exchange an authorization code and its PKCE verifier for an API key',
  tag,
  auth: 'none',
  status: 200,
  body: codeExchangeSchema,
  response: issuedKeySchema,
  async handler({ ctx, body }) {
    // One answer for every failure, so that it reveals nothing about the code. The code is spent either way.
    const refused = () => new GatewayError(403, 'Invalid code or code_verifier: the code may be unknown, expired or already used')
    const record = await ctx.codes.take(body.code)
    if (!record || !verifierMatches(body.code_verifier, record.challenge, record.method)) throw refused()
    // OpenRouter's clients may name the method again: it must be the code's.
    if (body.code_challenge_method !== undefined && body.code_challenge_method !== record.method) throw refused()
    const user = await ctx.accounts.getUser(record.user_id)
    if (!user || user.disabled) throw refused()
    const minted = record.minted ? await mintedKeyInput(ctx, record.minted) : undefined
    // The key that created the code (or one above it) was revoked, deleted or disabled, or has expired.
    if (minted === null) throw refused()
    // A browser-flow code carries the limit the person approved; a minted key's terms come from its parent.
    const { key, record: issued } = await ctx.accounts.issueKey({
      userId: user.id,
      label: minted?.label ?? `App ${record.callback_origin}`,
      ...(record.limit ? { creditLimit: record.limit } : {}),
      ...(minted ?? {}),
    })
    // Its parent stopped while it was issued (on any instance): it is revoked before anyone sees it.
    if (minted && (await ctx.accounts.currentAncestors(minted.ancestors)) === null) {
      await ctx.accounts.revokeKey(issued.hash)
      throw refused()
    }
    return { key, user_id: user.id }
  },
})
