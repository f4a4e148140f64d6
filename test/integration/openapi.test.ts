import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGateway, type TestGateway } from '../helpers/server'

// Every operation of the seed, the gateway's original specification (docs/api.md#openrouter-compatibility), with
// methods and paths as the seed writes them.
const specOperations = [
  'GET /api/v1/me',
  'POST /api/v1/auth/keys/authorize',
  'POST /api/v1/auth/keys/code',
  'POST /api/v1/auth/keys',
  'GET /api/v1/auth',
  'GET /api/v1/byok',
  'POST /api/v1/byok',
  'POST /api/v1/byok/test',
  'GET /api/v1/byok/usage',
  'GET /api/v1/byok/{id}',
  'PATCH /api/v1/byok/{id}',
  'DELETE /api/v1/byok/{id}',
  'POST /api/v1/byok/{id}/test',
  'POST /api/v1/audio/speech',
  'POST /api/v1/audio/transcriptions',
  'GET /api/v1/models',
  'GET /api/v1/models/count',
  // OpenRouter's and OpenAI's catalogue routes beyond the seed (docs/api.md#openrouter-compatibility).
  'GET /api/v1/models/user',
  'GET /api/v1/models/{id}',
  'GET /api/v1/models/{author}/{slug}',
  'GET /api/v1/models/{author}/{slug}/endpoints',
  'GET /api/v1/model/{author}/{slug}',
  'POST /api/v1/chat/completions',
  'GET /api/v1/providers',
  // OpenRouter's usage routes (docs/usage.md).
  'GET /api/v1/credits',
  'POST /api/v1/embeddings',
  // OpenRouter's list of embedding models (docs/embeddings.md#the-embedding-models).
  'GET /api/v1/embeddings/models',
  // OpenAI's Images API (docs/images.md).
  'POST /api/v1/images/generations',
  'GET /api/v1/generation',
  'GET /api/v1/activity',
  // OpenRouter's API key routes (docs/keys.md).
  'GET /api/v1/key',
  'GET /api/v1/keys',
  'POST /api/v1/keys',
  'GET /api/v1/keys/{hash}',
  'PATCH /api/v1/keys/{hash}',
  'DELETE /api/v1/keys/{hash}',
  // A user's limits (docs/first-party.md#budgets-for-users-and-end-users).
  'PATCH /api/v1/users/{id}',
  // Anthropic's Messages API (docs/messages.md).
  'POST /api/v1/messages',
  'POST /api/v1/messages/count_tokens',
  // OpenAI's Responses API (docs/responses.md).
  'POST /api/v1/responses',
  'GET /api/v1/responses/{id}',
  'DELETE /api/v1/responses/{id}',
  'GET /api/v1/responses/{id}/input_items',
  // OpenAI's legacy text completions (docs/completions.md).
  'POST /api/v1/completions',
  // Liveness and readiness (docs/operations.md#health-and-readiness).
  'GET /api/v1/health',
  'GET /api/v1/health/ready',
]

describe('GET /api/v1/openapi.json', () => {
  let t: TestGateway
  let doc: any
  beforeAll(async () => {
    t = await startGateway()
    const res = await t.request('/api/v1/openapi.json')
    expect(res.status).toBe(200)
    doc = await res.json()
  })
  afterAll(() => t.close())

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator()
    const result = await validator.validate(doc)
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
    // The validator does reject a broken document.
    expect((await new Validator().validate({ openapi: '3.1.0', info: { title: 'x' }, paths: { broken: {} } })).valid).toBe(false)
  })

  it('lists every operation of docs/api.md, the consent page and its own', () => {
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    )
    expect(operations.sort()).toEqual([...specOperations, 'GET /api/v1/openapi.json', 'GET /api/v1/auth/consent', 'POST /api/v1/auth/consent'].sort())
  })

  it('describes request and response shapes from the validation schemas', () => {
    const me = doc.paths['/api/v1/me'].get
    expect(me.security).toEqual([{ bearer: [] }])
    const identity = me.responses['200'].content['application/json'].schema
    expect(identity.required).toEqual(['user_id', 'email', 'org_name', 'org_id', 'plan', 'credits', 'limits'])
    expect(identity.properties.credits.required).toEqual(['balance', 'total_credits', 'total_usage'])

    const exchange = doc.paths['/api/v1/auth/keys'].post.requestBody.content['application/json'].schema
    expect(exchange.properties.code_verifier).toMatchObject({ type: 'string', minLength: 43, maxLength: 128 })
    expect(exchange.additionalProperties).toBe(false)

    const list = doc.paths['/api/v1/byok'].get
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit')
    expect(limit).toMatchObject({ in: 'query', required: false })
    const id = doc.paths['/api/v1/byok/{id}'].get.parameters[0]
    expect(id).toMatchObject({ name: 'id', in: 'path', required: true, schema: { type: 'string' } })
    expect(id.schema.pattern).toContain('[1-8]')

    const chat = doc.paths['/api/v1/chat/completions'].post
    expect(chat.requestBody.content['application/json'].schema.required).toEqual(['messages'])
    expect(chat.responses['402'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
    expect(doc.paths['/api/v1/models'].get.security).toEqual([])
    expect(doc.components.schemas.Error.properties.error.required).toEqual(['code', 'type', 'message'])

    // The key routes: a hash in the path, the management routes' 403, POST's 201 with the key.
    const created = doc.paths['/api/v1/keys'].post
    expect(created.responses['201'].content['application/json'].schema.required).toEqual(['data', 'key'])
    expect(created.responses['403']).toBeDefined()
    expect(created.requestBody.content['application/json'].schema.required).toEqual(['name'])
    expect(doc.paths['/api/v1/keys/{hash}'].patch.parameters[0]).toMatchObject({ name: 'hash', in: 'path', required: true })
    expect(doc.paths['/api/v1/key'].get.security).toEqual([{ bearer: [] }])
  })
})
