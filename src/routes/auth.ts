import { notImplemented } from '../errors'
import { authorizationCodeSchema, authorizeQuerySchema, codeExchangeSchema, codeRequestSchema, issuedKeySchema } from '../schemas/auth'
import { defineRoute } from './define'

const pending = () => {
  throw notImplemented('Key issuance by PKCE')
}

/** GET /auth: begins the browser authorization (api.md 4.2). */
export const beginAuthRoute = defineRoute({
  method: 'GET',
  path: '/auth',
  operationId: 'beginAuthorization',
  summary: 'Begin the browser PKCE authorization: redirects to sign-in or consent',
  tag: 'Key issuance',
  auth: 'none',
  status: 302,
  query: authorizeQuerySchema,
  handler: pending,
})

/** POST /auth/keys/authorize: creates an authorization code for the caller. */
export const authorizeRoute = defineRoute({
  method: 'POST',
  path: '/auth/keys/authorize',
  operationId: 'authorizeKeyCode',
  summary: 'Create an authorization code for the calling key’s user',
  tag: 'Key issuance',
  auth: 'key',
  status: 201,
  body: codeRequestSchema,
  response: authorizationCodeSchema,
  handler: pending,
})

/** POST /auth/keys/code: programmatic creation of an authorization code. */
export const createCodeRoute = defineRoute({
  method: 'POST',
  path: '/auth/keys/code',
  operationId: 'createKeyCode',
  summary: 'Create an authorization code programmatically',
  tag: 'Key issuance',
  auth: 'key',
  status: 201,
  body: codeRequestSchema,
  response: authorizationCodeSchema,
  handler: pending,
})

/** POST /auth/keys: exchanges a code and its verifier for a new API key. */
export const exchangeCodeRoute = defineRoute({
  method: 'POST',
  path: '/auth/keys',
  operationId: 'exchangeKeyCode',
  summary: 'Exchange an authorization code and its PKCE verifier for an API key',
  tag: 'Key issuance',
  auth: 'none',
  status: 200,
  body: codeExchangeSchema,
  response: issuedKeySchema,
  handler: pending,
})
