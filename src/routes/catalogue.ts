import { filterModels } from '../catalogue/filter'
import { modelsRss } from '../catalogue/rss'
import { publicHref, publicOrigin } from '../http/public-url'
import { listModelsQuerySchema, modelCountSchema, modelListSchema, providerListSchema } from '../schemas/catalogue'
import { defineRoute } from './define'

const yes = (flag: string | undefined) => flag === 'true' || flag === '1'

/** GET /models (api.md 4.5, decisions.md §5): filtered, as JSON or as an RSS feed. */
export const listModelsRoute = defineRoute({
  method: 'GET', path: '/models', operationId: 'listModels', summary: 'List models, filtered; RSS with use_rss', tag: 'Catalogue',
  auth: 'public-catalogue', status: 200, query: listModelsQuerySchema, response: modelListSchema,
  async handler({ ctx, query, event, requestId }) {
    await ctx.catalogue.ready()
    const models = filterModels(ctx.catalogue.entries(), query).map((entry) => entry.view)
    if (!yes(query.use_rss)) return { object: 'list', data: models }
    const template = ctx.options.chatLinkTemplate
    const xml = modelsRss(models, {
      origin: publicOrigin(ctx, event),
      selfUrl: publicHref(ctx, event),
      chatLink: yes(query.use_rss_chat_links) ? (id) => template.replace('{id}', encodeURIComponent(id)) : undefined,
    })
    return new Response(xml, { status: 200, headers: { 'content-type': 'application/rss+xml; charset=utf-8', 'x-request-id': requestId } })
  },
})

/** GET /models/count. */
export const countModelsRoute = defineRoute({
  method: 'GET', path: '/models/count', operationId: 'countModels', summary: 'Count the models', tag: 'Catalogue',
  auth: 'public-catalogue', status: 200, response: modelCountSchema,
  async handler({ ctx }) {
    await ctx.catalogue.ready()
    return { data: { count: ctx.catalogue.entries().length } }
  },
})

/** GET /providers (api.md 4.7). */
export const listProvidersRoute = defineRoute({
  method: 'GET', path: '/providers', operationId: 'listProviders', summary: 'List the upstream providers', tag: 'Catalogue',
  auth: 'public-catalogue', status: 200, response: providerListSchema,
  async handler({ ctx }) {
    await ctx.catalogue.ready()
    return { data: ctx.catalogue.providers() }
  },
})
