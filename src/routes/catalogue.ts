import { notImplemented } from '../errors'
import { listModelsQuerySchema, modelCountSchema, modelListSchema, providerListSchema } from '../schemas/catalogue'
import { defineRoute } from './define'

const pending = () => {
  throw notImplemented('The model and provider catalogue')
}

/** GET /models (api.md 4.5). */
export const listModelsRoute = defineRoute({
  method: 'GET', path: '/models', operationId: 'listModels', summary: 'List models, filtered; RSS with use_rss', tag: 'Catalogue',
  auth: 'public-catalogue', status: 200, query: listModelsQuerySchema, response: modelListSchema, handler: pending,
})

/** GET /models/count. */
export const countModelsRoute = defineRoute({
  method: 'GET', path: '/models/count', operationId: 'countModels', summary: 'Count the models', tag: 'Catalogue',
  auth: 'public-catalogue', status: 200, response: modelCountSchema, handler: pending,
})

/** GET /providers (api.md 4.7). */
export const listProvidersRoute = defineRoute({
  method: 'GET', path: '/providers', operationId: 'listProviders', summary: 'List the upstream providers', tag: 'Catalogue',
  auth: 'public-catalogue', status: 200, response: providerListSchema, handler: pending,
})
