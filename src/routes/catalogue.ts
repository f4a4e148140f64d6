import type { H3Event } from 'h3'
import type { CatalogueModel } from '../catalogue/catalogue'
import { modelEndpoints } from '../catalogue/endpoints'
import { entriesServing, filterModels } from '../catalogue/filter'
import { modelsRss } from '../catalogue/rss'
import type { GatewayContext } from '../context'
import { publicHref, publicOrigin } from '../http/public-url'
import { usableEntries } from '../routing/plan'
import {
  countModelsQuerySchema,
  listEmbeddingModelsQuerySchema,
  listModelsQuerySchema,
  listUserModelsQuerySchema,
  modelCountSchema,
  modelEndpointsSchema,
  modelIdPathSchema,
  modelListSchema,
  modelObjectSchema,
  modelPathSchema,
  modelResponseSchema,
  providerListSchema,
} from '../schemas/catalogue'
import { defineRoute } from './define'

const yes = (flag: string | undefined) => flag === 'true' || flag === '1'

/**
 * A page of models in `/models`' shape: the seed's `object` and `data`, OpenRouter's `total_count` (every model the
 * filters keep) and `links.next` (the next page's address while more are left, else null). Without `offset` and
 * `limit` the page is the whole list, as on OpenRouter.
 */
function modelPage(ctx: GatewayContext, event: H3Event, models: CatalogueModel[], query: { offset?: number; limit?: number }) {
  const offset = query.offset ?? 0
  const data = query.limit === undefined ? models.slice(offset) : models.slice(offset, offset + query.limit)
  let next: string | null = null
  if (offset + data.length < models.length && data.length) {
    const params = new URLSearchParams(event.url.search)
    params.set('offset', String(offset + data.length))
    next = `${publicOrigin(ctx, event)}${event.url.pathname}?${params}`
  }
  return { object: 'list' as const, data, total_count: models.length, links: { next } }
}

/** GET /models (docs/catalogue.md#filters-pages-and-rss): filtered, as JSON (a page when asked) or as an RSS feed. */
export const listModelsRoute = defineRoute({
  method: 'GET',
  path: '/models',
  operationId: 'listModels',
  summary: 'List models, filtered; RSS with use_rss',
  tag: 'Catalogue',
  auth: 'public-catalogue',
  status: 200,
  query: listModelsQuerySchema,
  response: modelListSchema,
  async handler({ ctx, query, event, requestId }) {
    await ctx.catalogue.ready()
    const models = filterModels(ctx.catalogue.entries(), query).map((entry) => entry.view)
    if (!yes(query.use_rss)) return modelPage(ctx, event, models, query)
    const template = ctx.options.chatLinkTemplate
    const xml = modelsRss(models, {
      origin: publicOrigin(ctx, event),
      selfUrl: publicHref(ctx, event),
      chatLink: yes(query.use_rss_chat_links) ? (id) => template.replace('{id}', encodeURIComponent(id)) : undefined,
    })
    return new Response(xml, { status: 200, headers: { 'content-type': 'application/rss+xml; charset=utf-8', 'x-request-id': requestId } })
  },
})

/**
 * GET /embeddings/models (OpenRouter's `listEmbeddingsModels`, docs/embeddings.md#the-embedding-models): the models
 * some provider of which serves embeddings, in /models' shape, a page when asked.
 */
export const listEmbeddingModelsRoute = defineRoute({
  method: 'GET',
  path: '/embeddings/models',
  operationId: 'listEmbeddingsModels',
  summary: 'List the embedding models',
  tag: 'Embeddings',
  auth: 'public-catalogue',
  status: 200,
  query: listEmbeddingModelsQuerySchema,
  response: modelListSchema,
  async handler({ ctx, query, event }) {
    await ctx.catalogue.ready()
    return modelPage(
      ctx,
      event,
      entriesServing(ctx.catalogue.entries(), 'embeddings').map((entry) => entry.view),
      query,
    )
  },
})

/** GET /models/count: the models the same filters as /models keep. */
export const countModelsRoute = defineRoute({
  method: 'GET',
  path: '/models/count',
  operationId: 'countModels',
  summary: 'Count the models',
  tag: 'Catalogue',
  auth: 'public-catalogue',
  status: 200,
  query: countModelsQuerySchema,
  response: modelCountSchema,
  async handler({ ctx, query }) {
    await ctx.catalogue.ready()
    return { data: { count: filterModels(ctx.catalogue.entries(), query).length } }
  },
})

/**
 * GET /models/user (OpenRouter's `listModelsUser`): the models the caller's key can be routed to, in /models' shape.
 * The gateway has no per-key provider settings; what limits a key is a provider without a service key, usable only
 * through a BYOK credential of the org that applies to this key (docs/byok.md).
 */
export const listUserModelsRoute = defineRoute({
  method: 'GET',
  path: '/models/user',
  operationId: 'listModelsUser',
  summary: 'List the models the calling key can use',
  tag: 'Catalogue',
  auth: 'key',
  status: 200,
  query: listUserModelsQuerySchema,
  response: modelListSchema,
  async handler({ ctx, query, event, principal }) {
    await ctx.catalogue.ready()
    const usable = await usableEntries(ctx, principal, filterModels(ctx.catalogue.entries(), query))
    return modelPage(
      ctx,
      event,
      usable.map((entry) => entry.view),
      query,
    )
  },
})

// The model of a path, or the catalogue's 404 (naming the replacement of a retired model).
const modelAt = async (ctx: GatewayContext, id: string, param: string) => {
  await ctx.catalogue.ready()
  return ctx.catalogue.require(id, param).view
}
// OpenAI's model object (`models.retrieve`) with the catalogue's fields beside it.
const asModelObject = (model: CatalogueModel) => ({ ...model, owned_by: model.author })

/** GET /models/{author}/{slug}: one model as OpenAI's model object (`id`, `object`, `created`, `owned_by`) plus the catalogue's fields. */
export const retrieveModelRoute = defineRoute({
  method: 'GET',
  path: '/models/:author/:slug',
  operationId: 'retrieveModel',
  summary: 'One model, as OpenAI’s model object with the catalogue’s fields',
  tag: 'Catalogue',
  auth: 'public-catalogue',
  status: 200,
  params: modelPathSchema,
  response: modelObjectSchema,
  handler: async ({ ctx, params }) => asModelObject(await modelAt(ctx, `${params.author}/${params.slug}`, 'slug')),
})

/** GET /models/{id} with the id in one segment (`openai%2Fgpt-4o-mini`): how OpenAI's SDK asks for `models.retrieve(id)`. */
export const retrieveModelByIdRoute = defineRoute({
  method: 'GET',
  path: '/models/:id',
  operationId: 'retrieveModelById',
  summary: 'One model by its URL-encoded id (OpenAI’s models.retrieve)',
  tag: 'Catalogue',
  auth: 'public-catalogue',
  status: 200,
  params: modelIdPathSchema,
  response: modelObjectSchema,
  // h3 decodes path parameters but keeps %2F (so that a segment cannot turn into a path): the id is decoded whole here,
  // where it is only a catalogue key.
  handler: async ({ ctx, params }) => asModelObject(await modelAt(ctx, params.id.replace(/%2F/gi, '/'), 'id')),
})

/** GET /model/{author}/{slug} (OpenRouter's `getModel`): `{ data: model }`. */
export const getModelRoute = defineRoute({
  method: 'GET',
  path: '/model/:author/:slug',
  operationId: 'getModel',
  summary: 'One model, as OpenRouter’s getModel answers',
  tag: 'Catalogue',
  auth: 'public-catalogue',
  status: 200,
  params: modelPathSchema,
  response: modelResponseSchema,
  handler: async ({ ctx, params }) => ({ data: await modelAt(ctx, `${params.author}/${params.slug}`, 'slug') }),
})

/** GET /models/{author}/{slug}/endpoints (OpenRouter's `listEndpoints`): one endpoint per provider serving the model, with the router's health. */
export const listModelEndpointsRoute = defineRoute({
  method: 'GET',
  path: '/models/:author/:slug/endpoints',
  operationId: 'listEndpoints',
  summary: 'The providers serving a model, with prices and health',
  tag: 'Catalogue',
  auth: 'public-catalogue',
  status: 200,
  params: modelPathSchema,
  response: modelEndpointsSchema,
  async handler({ ctx, params }) {
    await ctx.catalogue.ready()
    return modelEndpoints(ctx.catalogue.require(`${params.author}/${params.slug}`, 'slug'), ctx.health)
  },
})

/** GET /providers (docs/catalogue.md#what-providers-shows). */
export const listProvidersRoute = defineRoute({
  method: 'GET',
  path: '/providers',
  operationId: 'listProviders',
  summary: 'List the upstream providers',
  tag: 'Catalogue',
  auth: 'public-catalogue',
  status: 200,
  response: providerListSchema,
  async handler({ ctx }) {
    await ctx.catalogue.ready()
    return { data: ctx.catalogue.providers() }
  },
})
