import { CAPABILITIES, CAPABILITY_NAMES, type Provider, type ProviderModel } from '../contracts'
import * as v from 'valibot'
import { createConsoleLogger, silentLogger, type Logger } from '../logger'
import { requireNodeBuiltin } from '../runtime/node-builtin'

/*
 * The catalogue file: prices and facts of models, per provider, that replace or extend the built-in ones without a
 * release (docs/catalogue.md, "The catalogue file"). `model-gateway catalogue update` writes it; `createGateway({
 * catalogue })` reads it.
 */

/** The `format` every catalogue file names. */
export const CATALOGUE_FORMAT = 'model-gateway-catalogue'
/** Largest catalogue file read, in bytes. */
export const MAX_CATALOGUE_BYTES = 20 * 1024 * 1024

// The API routes a catalogue file's model may list in `endpoints`: every capability's (the table's order).
const ROUTES = CAPABILITY_NAMES.map((capability) => CAPABILITIES[capability].path)

const isDay = (text: string) => {
  const at = Date.parse(`${text}T00:00:00Z`)
  return Number.isFinite(at) && new Date(at).toISOString().slice(0, 10) === text
}
const day = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day written YYYY-MM-DD'), v.check(isDay, 'must be a real day'))
const price = v.pipe(v.string(), v.regex(/^\d{1,15}(?:\.\d{1,30})?$/, 'must be a plain decimal string such as "0.0000025" (no sign, no exponent)'))
const modelId = v.pipe(
  v.string(),
  v.maxLength(256, 'must be at most 256 characters'),
  v.regex(/^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.:@+-]*$/, 'must be a model id author/slug (openai/gpt-4o-mini)'),
)
const slug = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'must be a provider slug (lowercase letters, digits, dot, dash)'))
const text = (max: number) => v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`))
const words = (count: number, max = 64) => v.pipe(v.array(text(max)), v.maxLength(count, `must have at most ${count} entries`))
const count = v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(1e9, 'must be at most 1000000000'))

const tierPricing = v.strictObject({
  prompt: v.optional(price),
  completion: v.optional(price),
  input_cache_read: v.optional(price),
  input_cache_write: v.optional(price),
  input_cache_write_1h: v.optional(price),
})
// A multiplier of every token price (Anthropic's speeds and inference regions: docs/money.md#priced-options).
const multipliers = v.pipe(
  v.record(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be an option name')), price),
  v.check((options) => Object.keys(options).length <= 10, 'must have at most 10 entries'),
)

const longContext = v.strictObject({
  above_prompt_tokens: count,
  prompt: v.optional(price),
  completion: v.optional(price),
  input_cache_read: v.optional(price),
  input_cache_write: v.optional(price),
  input_cache_write_1h: v.optional(price),
  internal_reasoning: v.optional(price),
})

const pricingSchema = v.strictObject({
  prompt: price,
  completion: price,
  request: v.optional(price),
  image: v.optional(price),
  image_output: v.optional(price),
  audio: v.optional(price),
  web_search: v.optional(price),
  internal_reasoning: v.optional(price),
  input_cache_read: v.optional(price),
  input_cache_write: v.optional(price),
  input_cache_write_1h: v.optional(price),
  audio_second: v.optional(price),
  character: v.optional(price),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO currency code such as "USD"'))),
  long_context: v.optional(longContext),
  service_tiers: v.optional(
    v.pipe(
      v.record(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be a tier name')), tierPricing),
      v.check((tiers) => Object.keys(tiers).length <= 10, 'must have at most 10 tiers'),
    ),
  ),
  speeds: v.optional(multipliers),
  inference_geos: v.optional(multipliers),
})

const modelSchema = v.strictObject({
  id: modelId,
  upstreamId: v.optional(text(256)),
  name: v.optional(text(200)),
  description: v.optional(text(4000)),
  contextLength: v.optional(count),
  maxCompletionTokens: v.optional(count),
  pricing: pricingSchema,
  inputModalities: v.optional(words(10)),
  outputModalities: v.optional(words(10)),
  supportedParameters: v.optional(words(100)),
  supportedVoices: v.optional(words(100)),
  tags: v.optional(words(20)),
  created: v.optional(
    v.pipe(v.number(), v.integer('must be whole epoch seconds'), v.minValue(0, 'must be epoch seconds'), v.maxValue(1e11, 'must be epoch seconds')),
  ),
  knowledgeCutoff: v.optional(text(32)),
  releaseDate: v.optional(day),
  huggingFaceId: v.optional(text(200)),
  detailsUrl: v.optional(text(2000)),
  reasoning: v.optional(v.strictObject({ mandatory: v.optional(v.boolean()), efforts: v.optional(words(10)), supportsMaxTokens: v.optional(v.boolean()) })),
  endpoints: v.optional(
    v.pipe(
      v.array(v.picklist(ROUTES, `must be API routes of the gateway (${ROUTES.join(', ')})`)),
      v.maxLength(ROUTES.length, `must have at most ${ROUTES.length} entries`),
    ),
  ),
  quantization: v.optional(text(16)),
  expirationDate: v.optional(day),
  replacement: v.optional(modelId),
  source: v.optional(v.strictObject({ url: text(2000), checked: day, note: v.optional(text(1000)) })),
  priceChanges: v.optional(
    v.pipe(v.array(v.strictObject({ from: day, pricing: pricingSchema, note: v.optional(text(1000)) })), v.maxLength(20, 'must have at most 20 entries')),
  ),
  speechUsageEvents: v.optional(v.boolean()),
})

const twice = (list: { id: string }[]) => list.find((m, i) => list.findIndex((o) => o.id === m.id) !== i)?.id

const models = v.pipe(
  v.array(modelSchema),
  v.maxLength(5000, 'must have at most 5000 models'),
  v.check(
    (list) => !twice(list),
    (issue) => `lists ${twice(issue.input as { id: string }[])} twice`,
  ),
)

/** The catalogue file's valibot schema (docs/catalogue.md, "The catalogue file"). */
export const catalogueFileSchema = v.strictObject({
  format: v.literal(CATALOGUE_FORMAT, `must be "${CATALOGUE_FORMAT}"`),
  version: v.literal(1, 'must be 1 (the only version there is)'),
  updated: day,
  note: v.optional(text(1000)),
  providers: v.pipe(
    v.record(slug, models),
    v.check((providers) => Object.keys(providers).length <= 100, 'must have at most 100 providers'),
  ),
})

/** A catalogue file's contents: per provider slug, the models whose fields replace or extend the built-in ones. */
export type CatalogueFile = v.InferOutput<typeof catalogueFileSchema>
/** One model of a catalogue file: a ProviderModel as JSON. */
export type CatalogueFileModel = CatalogueFile['providers'][string][number]

// `providers.openai[3].pricing.prompt`: the field of an issue, array indexes in brackets.
function fieldOf(issue: v.BaseIssue<unknown>): string {
  let path = ''
  for (const item of issue.path ?? []) {
    const key = String(item.key)
    path += item.type === 'array' ? `[${key}]` : path ? `.${key}` : key
  }
  return path || '(the whole file)'
}

/** Checks parsed JSON against the schema; a bad one throws a TypeError naming `name`, the field and the problem. */
export function parseCatalogueFile(value: unknown, name: string): CatalogueFile {
  const result = v.safeParse(catalogueFileSchema, value)
  if (result.success) return result.output
  const issue = result.issues[0]
  const problem =
    issue.type === 'strict_object' && issue.expected === 'never'
      ? 'is not a field of the catalogue format (a typo?)'
      : issue.input === undefined
        ? 'is missing'
        : typeof issue.input === 'object' && issue.input !== null
          ? issue.message
          : `${issue.message} (got ${JSON.stringify(issue.input)?.slice(0, 60) ?? typeof issue.input})`
  const more = result.issues.length > 1 ? ` (and ${result.issues.length - 1} more problem${result.issues.length > 2 ? 's' : ''})` : ''
  throw new TypeError(`model-gateway: catalogue file ${name}: ${fieldOf(issue)} ${problem}${more}; see docs/catalogue.md`)
}

/** Reads and checks a catalogue file; throws a TypeError naming the path and the problem. */
export function readCatalogueFile(path: string): CatalogueFile {
  let body: string
  try {
    const fs = requireNodeBuiltin('node:fs', 'a catalogue file path (`catalogue`)')
    const size = fs.statSync(path).size
    if (size > MAX_CATALOGUE_BYTES) throw new Error(`${size} bytes, more than the ${MAX_CATALOGUE_BYTES} a catalogue may have`)
    body = fs.readFileSync(path, 'utf8')
  } catch (error) {
    throw new TypeError(`model-gateway: catalogue file ${path}: cannot read it (${(error as Error).message})`)
  }
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch (error) {
    throw new TypeError(`model-gateway: catalogue file ${path}: not valid JSON (${(error as Error).message})`)
  }
  return parseCatalogueFile(json, path)
}

/** A file model over the built-in one: the file's fields win, those it leaves out (prices included) keep theirs. */
export function mergeModel(model: ProviderModel, listed: CatalogueFileModel): ProviderModel {
  return { ...model, ...listed, pricing: { ...model.pricing, ...listed.pricing } }
}

/**
 * The provider with another model list. Presets and most providers are plain objects and are copied; a class
 * instance (methods on its prototype, maybe private fields) is wrapped so that only `models` differs.
 */
export function withModels(provider: Provider, models: ProviderModel[]): Provider {
  const prototype = Object.getPrototypeOf(provider)
  if (prototype === Object.prototype || prototype === null) return { ...provider, models }
  return new Proxy(provider, {
    get(target, key) {
      if (key === 'models') return models
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * The providers with a catalogue file applied: for each configured provider the file names, a model with a known id
 * has its fields replaced by the file's (the others kept), a new id is added. Slugs not configured are ignored with one
 * info log.
 */
export function applyCatalogueFile(providers: Provider[], file: CatalogueFile, logger: Logger): Provider[] {
  const configured = new Set(providers.map((p) => p.slug))
  const ignored = Object.keys(file.providers).filter((s) => !configured.has(s))
  if (ignored.length) logger.info(`catalogue file: ignoring the models of ${ignored.join(', ')}: no such provider is configured`)
  let changed = 0
  let added = 0
  const result = providers.map((provider) => {
    const listed = file.providers[provider.slug]
    if (!listed?.length) return provider
    const byId = new Map(listed.map((m) => [m.id, m]))
    const models = provider.models.map((model) => {
      const entry = byId.get(model.id)
      if (!entry) return model
      byId.delete(model.id)
      changed++
      return mergeModel(model, entry)
    })
    added += byId.size
    return withModels(provider, [...models, ...byId.values()])
  })
  if (changed || added) logger.info(`catalogue file (updated ${file.updated}): ${changed} model(s) changed, ${added} added`)
  return result
}

/** The `catalogue` option applied: a path is read (node:fs), an object checked; the providers unchanged without it. */
export function applyCatalogueOption(providers: Provider[], catalogue: string | CatalogueFile | undefined, logger: Logger | false | undefined): Provider[] {
  if (catalogue === undefined) return providers
  const file = typeof catalogue === 'string' ? readCatalogueFile(catalogue) : parseCatalogueFile(catalogue, '(the catalogue option)')
  return applyCatalogueFile(providers, file, logger === false ? silentLogger : (logger ?? createConsoleLogger()))
}
