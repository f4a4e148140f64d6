import { buildOpenApiDocument } from '../openapi'
import { defineRoute, type RouteDefinition } from './define'

/** GET /openapi.json: the OpenAPI 3.1 document of `routes` (and of itself), built once on first request. */
export function createOpenApiRoute(routes: RouteDefinition[], info: { basePath: string; version: string; publicCatalogue: boolean }) {
  let document: Record<string, unknown> | undefined
  const route: RouteDefinition = defineRoute({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This API’s OpenAPI 3.1 document',
    tag: 'Meta',
    auth: 'none',
    status: 200,
    handler: () => (document ??= buildOpenApiDocument([...routes, route], info)),
  })
  return route
}
