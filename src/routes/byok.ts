import * as v from 'valibot'
import { byokUsage } from '../billing/byok-fees'
import { byokProvider, testCredential } from '../byok/test-credential'
import {
  byokUsageSchema,
  createCredentialSchema,
  credentialSchema,
  listCredentialsQuerySchema,
  testCredentialSchema,
  testResultSchema,
  updateCredentialSchema,
} from '../schemas/byok'
import { idParamsSchema } from '../schemas/common'
import { defineRoute } from './define'
import { invalidRequest } from '../errors'
import type { CredentialInput } from '../stores/byok'

const tag = 'BYOK'
const one = v.object({ data: credentialSchema })
const testResult = v.object({ data: testResultSchema })

type Editable = v.InferOutput<typeof updateCredentialSchema>

/**
 * A create or update body as the store takes it (docs/byok.md): OpenRouter's `is_required` is `always_use` (400 when
 * both are given and differ); `workspace_id`, when given, must be the org's own id (an org is the gateway's one
 * workspace).
 */
function credentialInput({ is_required: required, workspace_id: workspace, ...fields }: Editable, orgId: string): CredentialInput {
  if (workspace !== undefined && workspace !== orgId)
    throw invalidRequest('workspace_id: must be your org’s id (org_id of GET /me): an org is this gateway’s one workspace', 'workspace_id')
  if (required !== undefined && fields.always_use !== undefined && required !== fields.always_use) {
    throw invalidRequest('is_required: is OpenRouter’s name for always_use; give one, or the same value for both', 'is_required')
  }
  return { ...fields, always_use: fields.always_use ?? required }
}

/** GET /byok: lists the org's credentials (docs/byok.md#credentials, docs/api.md#pagination). */
export const listCredentialsRoute = defineRoute({
  method: 'GET',
  path: '/byok',
  operationId: 'listByokCredentials',
  summary: 'List provider credentials',
  tag,
  auth: 'key',
  status: 200,
  query: listCredentialsQuerySchema,
  response: v.object({ data: v.array(credentialSchema), total_count: v.pipe(v.number(), v.integer()) }),
  handler: ({ ctx, principal, query }) => ctx.byok.list(principal.org.id, query),
})

/** POST /byok: stores a credential, its secret encrypted. */
export const createCredentialRoute = defineRoute({
  method: 'POST',
  path: '/byok',
  operationId: 'createByokCredential',
  summary: 'Add a provider credential',
  tag,
  auth: 'key',
  status: 201,
  body: createCredentialSchema,
  response: one,
  async handler({ ctx, principal, body }) {
    const provider = byokProvider(ctx, body.provider)
    const { key, provider: slug, ...fields } = body
    return { data: await ctx.byok.create(principal.org.id, { ...credentialInput(fields, principal.org.id), key, provider: slug, providerName: provider.name }) }
  },
})

/** POST /byok/test: tests a key without storing it. */
export const testKeyRoute = defineRoute({
  method: 'POST',
  path: '/byok/test',
  operationId: 'testByokKey',
  summary: 'Test a provider key without storing it',
  tag,
  auth: 'key',
  status: 200,
  body: testCredentialSchema,
  response: testResult,
  handler: async ({ ctx, body }) => ({ data: await testCredential(ctx, byokProvider(ctx, body.provider), body.key) }),
})

/** GET /byok/usage: the period's BYOK figures. */
export const byokUsageRoute = defineRoute({
  method: 'GET',
  path: '/byok/usage',
  operationId: 'getByokUsage',
  summary: 'BYOK usage and fees of the current period',
  tag,
  auth: 'key',
  status: 200,
  response: v.object({ data: byokUsageSchema }),
  handler: async ({ ctx, principal }) => ({ data: await byokUsage(ctx, principal.org.id) }),
})

/** GET /byok/{id}. */
export const getCredentialRoute = defineRoute({
  method: 'GET',
  path: '/byok/:id',
  operationId: 'getByokCredential',
  summary: 'Read one provider credential',
  tag,
  auth: 'key',
  status: 200,
  params: idParamsSchema,
  response: one,
  handler: async ({ ctx, principal, params }) => ({ data: await ctx.byok.get(principal.org.id, params.id) }),
})

/** PATCH /byok/{id}: updates fields; `key` rotates the secret in place. */
export const updateCredentialRoute = defineRoute({
  method: 'PATCH',
  path: '/byok/:id',
  operationId: 'updateByokCredential',
  summary: 'Update or rotate a provider credential',
  tag,
  auth: 'key',
  status: 200,
  params: idParamsSchema,
  body: updateCredentialSchema,
  response: one,
  handler: async ({ ctx, principal, params, body }) => ({ data: await ctx.byok.update(principal.org.id, params.id, credentialInput(body, principal.org.id)) }),
})

/** DELETE /byok/{id}. */
export const deleteCredentialRoute = defineRoute({
  method: 'DELETE',
  path: '/byok/:id',
  operationId: 'deleteByokCredential',
  summary: 'Delete a provider credential',
  tag,
  auth: 'key',
  status: 200,
  params: idParamsSchema,
  response: v.object({ deleted: v.boolean() }),
  handler: ({ ctx, principal, params }) => ctx.byok.remove(principal.org.id, params.id),
})

/** POST /byok/{id}/test: tests a stored credential. */
export const testCredentialRoute = defineRoute({
  method: 'POST',
  path: '/byok/:id/test',
  operationId: 'testByokCredential',
  summary: 'Test a stored provider credential',
  tag,
  auth: 'key',
  status: 200,
  params: idParamsSchema,
  response: testResult,
  async handler({ ctx, principal, params }) {
    const record = await ctx.byok.record(principal.org.id, params.id)
    return { data: await testCredential(ctx, byokProvider(ctx, record.provider), await ctx.byok.secretOf(record)) }
  },
})
