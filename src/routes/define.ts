import type { H3Event } from 'h3'
import type * as v from 'valibot'
import type { KeyKind } from '../auth/bearer'
import type { Capability } from '../contracts'
import type { GatewayContext } from '../context'
import type { ErrorBodyShape } from '../errors'
import type { AnySchema } from '../http/validate'
import type { Principal } from '../stores/account-types'
import type { PolicyRun } from '../policies/run'
import type { PolicyView } from '../policies/views'

/** HTTP methods the API uses. */
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** Who may call a route: a bearer key is required, or anyone (public catalogue routes are configurable). */
export type RouteAuth = 'key' | 'none' | 'public-catalogue'

type Out<S> = S extends AnySchema ? v.InferOutput<S> : undefined

/** What a route's handler receives: validated input and the caller. */
export interface RouteInput<B, Q, P, F = undefined, A extends RouteAuth = RouteAuth> {
  event: H3Event
  ctx: GatewayContext
  requestId: string
  /** The caller: always there on a route whose auth is `key`; null on the others when the request has no key. */
  principal: A extends 'key' ? Principal : Principal | null
  /** The validated JSON body; undefined when the route also takes `form` and the request was multipart/form-data. */
  body: F extends AnySchema ? Out<B> | undefined : Out<B>
  /** The validated multipart/form-data fields, when the route takes `form` and the request sent them. */
  form: F extends AnySchema ? Out<F> | undefined : undefined
  query: Out<Q>
  params: Out<P>
  /** The host's policies once they ran on the request (docs/policies.md#policy-hooks); undefined when it has none. */
  policy?: PolicyRun
}

/** One API route: method, path, schemas, auth and handler; feeds both the h3 app and the OpenAPI document. */
export interface RouteDefinition<
  B extends AnySchema | undefined = AnySchema | undefined,
  Q extends AnySchema | undefined = AnySchema | undefined,
  P extends AnySchema | undefined = AnySchema | undefined,
  F extends AnySchema | undefined = AnySchema | undefined,
  A extends RouteAuth = RouteAuth,
> {
  method: Method
  /** Path below the base path, with `:name` parameters (`/byok/:id`). */
  path: string
  operationId: string
  summary: string
  tag: string
  auth: A
  /** The capability it serves on the pipeline (docs/capabilities.md): it may answer 402, 408, 502 and 503. */
  capability?: Capability
  /**
   * Where its key may come from besides `Authorization: Bearer` (docs/keys.md): `x-api-key` for the routes of
   * Anthropic's API, which its clients authenticate with that header.
   */
  keyHeaders?: 'x-api-key'[]
  /** Errors in the route's API's own shape (Anthropic's, OpenAI's Responses) instead of the gateway's envelope (docs/errors.md). */
  errorBody?: ErrorBodyShape
  /** How the host's policies read and rewrite its body (docs/policies.md#policy-hooks); a route without one runs none. */
  policyView?: PolicyView
  /** Which keys a route that needs one takes (docs/keys.md): API keys (default), management keys, or both. */
  keyKind?: KeyKind
  body?: B
  query?: Q
  params?: P
  /**
   * Also accept multipart/form-data (OpenAI's file uploads): text fields as strings, files as `FormFile`, a repeated
   * name as an array, validated by this schema and handed to the handler as `form`.
   */
  form?: F
  /** Which body size limit applies (docs/limits.md#body-size; sizes in the options). Default `default`. */
  bodyLimit?: 'default' | 'chat' | 'transcription' | 'countTokens'
  /** Success status (docs/api.md#success-statuses). */
  status: 200 | 201 | 302
  /** Schema of the success body, for the OpenAPI document. */
  response?: AnySchema
  /** Media type of the success body when it is not JSON. */
  responseType?: string
  /** Returns a JSON-serialisable value or a Response. */
  handler: (input: RouteInput<B, Q, P, F, A>) => unknown | Promise<unknown>
}

/** Declares a route with its input types inferred from its schemas. */
export function defineRoute<
  B extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  P extends AnySchema | undefined = undefined,
  F extends AnySchema | undefined = undefined,
  A extends RouteAuth = RouteAuth,
>(route: RouteDefinition<B, Q, P, F, A>): RouteDefinition<B, Q, P, F, A> {
  return route
}
