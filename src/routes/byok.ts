import * as v from 'valibot'
import { byokUsage } from '../billing/byok-fees'
import { byokProvider, testCredential } from '../byok/test-credential'
import {
  byokUsageSchema, createCredentialSchema, credentialSchema, listCredentialsQuerySchema,
  testCredentialSchema, testResultSchema, updateCredentialSchema,
} from '../schemas/byok'
import { idParamsSchema } from '../schemas/common'
import { defineRoute } from './define'

const tag = 'BYOK'
const one = v.object({ data: credentialSchema })
const testResult = v.object({ data: testResultSchema })

/** GET /byok: lists the org's credentials (api.md 4.3, decisions.md §7). */
export const listCredentialsRoute = defineRoute({
  method: 'GET', path: '/byok', operationId: 'listByokCredentials', summary: 'List provider credentials', tag, auth: 'key', status: 200,
  query: listCredentialsQuerySchema,
  response: v.object({ data: v.array(credentialSchema), total_count: v.pipe(v.number(), v.integer()) }),
  handler: ({ ctx, principal, query }) => ctx.byok.list(principal!.org.id, query),
})

/** POST /byok: stores a credential, its secret encrypted. */
export const createCredentialRoute = defineRoute({
  method: 'POST', path: '/byok', operationId: 'createByokCredential', summary: 'Add a provider credential', tag, auth: 'key', status: 201,
  body: createCredentialSchema, response: one,
  async handler({ ctx, principal, body }) {
    const provider = byokProvider(ctx, body.provider)
    return { data: await ctx.byok.create(principal!.org.id, { ...body, providerName: provider.name }) }
  },
})

/** POST /byok/test: tests a key without storing it. */
export const testKeyRoute = defineRoute({
  method: 'POST', path: '/byok/test', operationId: 'testByokKey', summary: 'Test a provider key without storing it', tag, auth: 'key', status: 200,
  body: testCredentialSchema, response: testResult,
  handler: async ({ ctx, body }) => ({ data: await testCredential(ctx, byokProvider(ctx, body.provider), body.key) }),
})

/** GET /byok/usage: the period's BYOK figures. */
export const byokUsageRoute = defineRoute({
  method: 'GET', path: '/byok/usage', operationId: 'getByokUsage', summary: 'BYOK usage and fees of the current period', tag, auth: 'key', status: 200,
  response: v.object({ data: byokUsageSchema }),
  handler: async ({ ctx, principal }) => ({ data: await byokUsage(ctx, principal!.org.id) }),
})

/** GET /byok/{id}. */
export const getCredentialRoute = defineRoute({
  method: 'GET', path: '/byok/:id', operationId: 'getByokCredential', summary: 'Read one provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, response: one,
  handler: async ({ ctx, principal, params }) => ({ data: await ctx.byok.get(principal!.org.id, params.id) }),
})

/** PATCH /byok/{id}: updates fields; `key` rotates the secret in place. */
export const updateCredentialRoute = defineRoute({
  method: 'PATCH', path: '/byok/:id', operationId: 'updateByokCredential', summary: 'Update or rotate a provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, body: updateCredentialSchema, response: one,
  handler: async ({ ctx, principal, params, body }) => ({ data: await ctx.byok.update(principal!.org.id, params.id, body) }),
})

/** DELETE /byok/{id}. */
export const deleteCredentialRoute = defineRoute({
  method: 'DELETE', path: '/byok/:id', operationId: 'deleteByokCredential', summary: 'Delete a provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, response: v.object({ deleted: v.boolean() }),
  handler: ({ ctx, principal, params }) => ctx.byok.remove(principal!.org.id, params.id),
})

/** POST /byok/{id}/test: tests a stored credential. */
export const testCredentialRoute = defineRoute({
  method: 'POST', path: '/byok/:id/test', operationId: 'testByokCredential', summary: 'Test a stored provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, response: testResult,
  async handler({ ctx, principal, params }) {
    const record = await ctx.byok.record(principal!.org.id, params.id)
    return { data: await testCredential(ctx, byokProvider(ctx, record.provider), await ctx.byok.secretOf(record)) }
  },
})
