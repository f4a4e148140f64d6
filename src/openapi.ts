import { toJsonSchema } from '@valibot/to-json-schema'
import type { AnySchema } from './http/validate'
import type { RouteDefinition } from './routes/define'
import { errorEnvelopeSchema } from './schemas/common'

type JsonObject = Record<string, unknown>

const jsonSchema = (schema: AnySchema, typeMode: 'input' | 'output'): JsonObject => {
  const { $schema: _ignored, ...rest } = toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore', typeMode }) as JsonObject
  return rest
}

const errorStatuses = (route: RouteDefinition): string[] => {
  const statuses = ['400', '404', '405', '413', '500']
  if (route.auth !== 'none') statuses.push('401')
  if (route.method === 'POST' || route.method === 'PATCH') statuses.push('415')
  if (route.auth === 'key') statuses.push('403', '429')
  if (route.capability) statuses.push('402', '408', '502', '503')
  return statuses.sort()
}

const requestContent = (route: RouteDefinition): JsonObject => {
  const content: JsonObject = {}
  if (route.body) content['application/json'] = { schema: jsonSchema(route.body, 'input') }
  if (route.form) {
    const schema = jsonSchema(route.form, 'input') as { properties?: Record<string, JsonObject> }
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      if (!Object.keys(property).length) schema.properties![name] = { type: 'string', contentMediaType: 'application/octet-stream' }
    content['multipart/form-data'] = { schema }
  }
  return content
}

/** The OpenAPI 3.1 document of the routes, generated from their valibot schemas. */
export function buildOpenApiDocument(routes: RouteDefinition[], info: { basePath: string; version: string; publicCatalogue: boolean }): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {}
  for (const route of routes) {
    const path = info.basePath + route.path.replace(/:(\w+)/g, '{$1}')
    const parameters: JsonObject[] = []
    for (const [where, schema] of [
      ['path', route.params],
      ['query', route.query],
    ] as const) {
      if (!schema) continue
      const object = jsonSchema(schema, 'input') as { properties?: Record<string, JsonObject>; required?: string[] }
      for (const [name, property] of Object.entries(object.properties ?? {})) {
        parameters.push({ name, in: where, required: where === 'path' || (object.required ?? []).includes(name), schema: property })
      }
    }
    const requiresKey = route.auth === 'key' || (route.auth === 'public-catalogue' && !info.publicCatalogue)
    const responses: Record<string, JsonObject> = {}
    const description = route.status === 302 ? 'Redirect' : 'Success'
    responses[String(route.status)] = route.response
      ? { description, content: { 'application/json': { schema: jsonSchema(route.response, 'output') } } }
      : route.responseType
        ? { description, content: { [route.responseType]: { schema: { type: 'string', contentMediaType: route.responseType } } } }
        : { description }
    for (const status of errorStatuses(route)) {
      responses[status] = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
    }
    const operation: JsonObject = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(route.body || route.form ? { requestBody: { required: true, content: requestContent(route) } } : {}),
      responses,
      security: requiresKey ? [{ bearer: [] }] : [],
    }
    ;(paths[path] ??= {})[route.method.toLowerCase()] = operation
  }
  return {
    openapi: '3.1.0',
    info: { title: 'model-gateway API', version: info.version, description: 'An OpenRouter-style gateway to upstream AI model providers.' },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: jsonSchema(errorEnvelopeSchema, 'output') },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: sk-service-v1-…' } },
    },
  }
}
