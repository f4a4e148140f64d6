import type { H3Event } from 'h3'
import type * as v from 'valibot'
import type { GatewayContext } from '../context'
import type { AnySchema } from '../http/validate'
import type { Principal } from '../stores/accounts'

/** HTTP methods the API uses. */
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** Who may call a route: a bearer key is required, or anyone (public catalogue routes are configurable). */
export type RouteAuth = 'key' | 'none' | 'public-catalogue'

type Out<S> = S extends AnySchema ? v.InferOutput<S> : undefined

/** What a route's handler receives: validated input and the caller. */
export interface RouteInput<B, Q, P> {
  event: H3Event
  ctx: GatewayContext
  requestId: string
  /** The caller; present on every route whose auth is `key`. */
  principal: Principal | null
  body: Out<B>
  query: Out<Q>
  params: Out<P>
}

/** One API route: method, path, schemas, auth and handler; feeds both the h3 app and the OpenAPI document. */
export interface RouteDefinition<B extends AnySchema | undefined = AnySchema | undefined, Q extends AnySchema | undefined = AnySchema | undefined, P extends AnySchema | undefined = AnySchema | undefined> {
  method: Method
  /** Path below the base path, with `:name` parameters (`/byok/:id`). */
  path: string
  operationId: string
  summary: string
  tag: string
  auth: RouteAuth
  body?: B
  query?: Q
  params?: P
  /** Which body size limit applies (decisions.md §10; sizes in the options). Default `default`. */
  bodyLimit?: 'default' | 'chat' | 'transcription'
  /** Success status (decisions.md §2). */
  status: 200 | 201 | 302
  /** Schema of the success body, for the OpenAPI document. */
  response?: AnySchema
  /** Media type of the success body when it is not JSON. */
  responseType?: string
  /** Returns a JSON-serialisable value or a Response. */
  handler: (input: RouteInput<B, Q, P>) => unknown | Promise<unknown>
}

/** Declares a route with its input types inferred from its schemas. */
export function defineRoute<B extends AnySchema | undefined = undefined, Q extends AnySchema | undefined = undefined, P extends AnySchema | undefined = undefined>(
  route: RouteDefinition<B, Q, P>,
): RouteDefinition<B, Q, P> {
  return route
}
