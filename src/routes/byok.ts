import * as v from 'valibot'
import { notImplemented } from '../errors'
import {
  byokUsageSchema, createCredentialSchema, credentialSchema, listCredentialsQuerySchema,
  testCredentialSchema, testResultSchema, updateCredentialSchema,
} from '../schemas/byok'
import { idParamsSchema } from '../schemas/common'
import { defineRoute } from './define'

const pending = () => {
  throw notImplemented('BYOK')
}
const tag = 'BYOK'
const one = v.object({ data: credentialSchema })
const testResult = v.object({ data: testResultSchema })

/** GET /byok: lists the org's credentials. */
export const listCredentialsRoute = defineRoute({
  method: 'GET', path: '/byok', operationId: 'listByokCredentials', summary: 'List provider credentials', tag, auth: 'key', status: 200,
  query: listCredentialsQuerySchema,
  response: v.object({ data: v.array(credentialSchema), total_count: v.pipe(v.number(), v.integer()) }),
  handler: pending,
})

/** POST /byok: stores a credential. */
export const createCredentialRoute = defineRoute({
  method: 'POST', path: '/byok', operationId: 'createByokCredential', summary: 'Add a provider credential', tag, auth: 'key', status: 201,
  body: createCredentialSchema, response: one, handler: pending,
})

/** POST /byok/test: tests a key without storing it. */
export const testKeyRoute = defineRoute({
  method: 'POST', path: '/byok/test', operationId: 'testByokKey', summary: 'Test a provider key without storing it', tag, auth: 'key', status: 200,
  body: testCredentialSchema, response: testResult, handler: pending,
})

/** GET /byok/usage: the period's BYOK figures. */
export const byokUsageRoute = defineRoute({
  method: 'GET', path: '/byok/usage', operationId: 'getByokUsage', summary: 'BYOK usage and fees of the current period', tag, auth: 'key', status: 200,
  response: v.object({ data: byokUsageSchema }), handler: pending,
})

/** GET /byok/{id}. */
export const getCredentialRoute = defineRoute({
  method: 'GET', path: '/byok/:id', operationId: 'getByokCredential', summary: 'Read one provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, response: one, handler: pending,
})

/** PATCH /byok/{id}. */
export const updateCredentialRoute = defineRoute({
  method: 'PATCH', path: '/byok/:id', operationId: 'updateByokCredential', summary: 'Update or rotate a provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, body: updateCredentialSchema, response: one, handler: pending,
})

/** DELETE /byok/{id}. */
export const deleteCredentialRoute = defineRoute({
  method: 'DELETE', path: '/byok/:id', operationId: 'deleteByokCredential', summary: 'Delete a provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, response: v.object({ deleted: v.boolean() }), handler: pending,
})

/** POST /byok/{id}/test. */
export const testCredentialRoute = defineRoute({
  method: 'POST', path: '/byok/:id/test', operationId: 'testByokCredential', summary: 'Test a stored provider credential', tag, auth: 'key', status: 200,
  params: idParamsSchema, response: testResult, handler: pending,
})
