import { capabilitiesOf, type ModelSource, type Provider, type ProviderModel } from '../contracts'
import { CATALOGUE_FORMAT, parseCatalogueFile, type CatalogueFile, type CatalogueFileModel } from './catalogue-file'
import { priceText, skip, type PriceTable, type Skipped, type TablePricing, type TableRow } from './price-table'

/*
 * A price table matched against the gateway's catalogue: what changed, what is new, what retires, and the catalogue
 * file with those changes written in (docs/catalogue.md, "Refreshing prices").
 */

/** The price fields a table may give, in the order they are shown. */
export const PRICE_FIELDS = ['prompt', 'completion', 'input_cache_read', 'input_cache_write', 'internal_reasoning', 'request', 'image', 'web_search'] as const
/** A price field of a table. */
export type PriceField = (typeof PRICE_FIELDS)[number]

/** One value before and after. */
export interface Change<T> {
  before?: T
  after: T
}

/** One model of one provider that the table changes or adds. */
export interface ModelUpdate {
  provider: string
  id: string
  /** The table row it comes from. */
  key: string
  /** The model as the gateway has it today (announced price changes in effect applied); none for a new model. */
  before?: ProviderModel
  /** What the catalogue file will hold for it (merged over an entry it already has), without `source`. */
  entry: CatalogueFileModel
  prices: Partial<Record<PriceField, Change<string>>>
  contextLength?: Change<number>
  maxCompletionTokens?: Change<number>
  expirationDate?: Change<string>
}

/** The table against the catalogue: models changed (prices, limits), added, retiring; models unchanged; rows left out. */
export interface PriceUpdate {
  changed: ModelUpdate[]
  added: ModelUpdate[]
  retired: ModelUpdate[]
  unchanged: number
  skipped: Skipped
}

const isChat = (model: ProviderModel) => capabilitiesOf(model).includes('chat')
const upstreamOf = (model: ProviderModel) => model.upstreamId ?? model.id.slice(model.id.indexOf('/') + 1)
const byName = (a: ModelUpdate, b: ModelUpdate) => a.provider.localeCompare(b.provider) || a.id.localeCompare(b.id)

/** The model as it stands on `today`: the latest announced price change in effect replaces its prices. */
function asOf(model: ProviderModel, today: string): ProviderModel {
  const change = model.priceChanges?.filter((c) => c.from <= today).sort((a, b) => b.from.localeCompare(a.from))[0]
  return change ? { ...model, pricing: change.pricing } : model
}

/** The same exact decimal, however written ("0.0000025" and "0.00000250"). */
const samePrice = (a: string | undefined, b: string) => a !== undefined && priceText(a) === priceText(b)

// The catalogue model a row prices: LiteLLM rows by upstream id (the exact spelling first), OpenRouter rows by id.
function findModel(models: ProviderModel[], row: TableRow): ProviderModel | undefined {
  if (row.id !== undefined) return models.find((m) => m.id === row.id)
  const wanted = row.upstreamId!
  return models.find((m) => upstreamOf(m) === wanted) ?? models.find((m) => upstreamOf(m).toLowerCase() === wanted.toLowerCase())
}

const withUsd = (pricing: TablePricing): CatalogueFileModel['pricing'] => ({ ...pricing, currency: 'USD' })

/** What the table changes of a model the catalogue has; undefined when nothing. */
function changesOf(row: TableRow, listed: ProviderModel, today: string): ModelUpdate | undefined {
  const before = asOf(listed, today)
  const prices: ModelUpdate['prices'] = {}
  for (const field of PRICE_FIELDS) {
    const after = row.pricing[field]
    if (after !== undefined && !samePrice(before.pricing[field], after)) prices[field] = { before: before.pricing[field], after }
  }
  // LiteLLM's input limit agrees with a context length that counts input and output (OpenAI's reasoning models).
  const context =
    row.contextLength !== undefined && before.contextLength !== row.contextLength && before.contextLength !== row.contextOr
      ? { before: before.contextLength, after: row.contextLength }
      : undefined
  const maxOutput =
    row.maxCompletionTokens !== undefined && before.maxCompletionTokens !== row.maxCompletionTokens
      ? { before: before.maxCompletionTokens, after: row.maxCompletionTokens }
      : undefined
  const expiration =
    row.expirationDate !== undefined && row.expirationDate !== before.expirationDate ? { before: before.expirationDate, after: row.expirationDate } : undefined
  const priced = Object.keys(prices).length > 0
  if (!priced && !context && !maxOutput && !expiration) return undefined
  // Price changes already in effect would replace the new prices: only those still to come are kept.
  const pending = priced && listed.priceChanges?.some((c) => c.from <= today) ? { priceChanges: listed.priceChanges.filter((c) => c.from > today) } : {}
  return {
    provider: row.provider,
    id: listed.id,
    key: row.key,
    before,
    entry: {
      id: listed.id,
      pricing: withUsd(row.pricing),
      ...(context ? { contextLength: context.after } : {}),
      ...(maxOutput ? { maxCompletionTokens: maxOutput.after } : {}),
      ...(expiration ? { expirationDate: expiration.after } : {}),
      ...pending,
    },
    prices,
    ...(context ? { contextLength: context } : {}),
    ...(maxOutput ? { maxCompletionTokens: maxOutput } : {}),
    ...(expiration ? { expirationDate: expiration } : {}),
  }
}

/** A model the catalogue lacks, as the table gives it. */
function addedOf(row: TableRow): ModelUpdate {
  const model = row.newModel!
  const slug = model.id.slice(model.id.indexOf('/') + 1)
  return {
    provider: row.provider,
    id: model.id,
    key: row.key,
    entry: {
      id: model.id,
      ...(model.upstreamId !== slug ? { upstreamId: model.upstreamId } : {}),
      ...(model.name ? { name: model.name } : {}),
      ...(model.created ? { created: model.created } : {}),
      pricing: withUsd(row.pricing),
      ...(row.contextLength ? { contextLength: row.contextLength } : {}),
      ...(row.maxCompletionTokens ? { maxCompletionTokens: row.maxCompletionTokens } : {}),
      ...(row.expirationDate ? { expirationDate: row.expirationDate } : {}),
    },
    prices: Object.fromEntries(PRICE_FIELDS.filter((f) => row.pricing[f] !== undefined).map((f) => [f, { after: row.pricing[f]! }])),
    ...(row.contextLength ? { contextLength: { after: row.contextLength } } : {}),
    ...(row.maxCompletionTokens ? { maxCompletionTokens: { after: row.maxCompletionTokens } } : {}),
  }
}

/** Matches a price table against the configured providers (their models as the gateway has them) on `today` (`YYYY-MM-DD`). */
export function planPriceUpdate(providers: Provider[], table: PriceTable, today: string): PriceUpdate {
  const skipped: Skipped = new Map([...table.skipped].map(([reason, { count, examples }]) => [reason, { count, examples: [...examples] }]))
  const bySlug = new Map(providers.map((p) => [p.slug, p]))
  const seen = new Set<string>()
  const changed: ModelUpdate[] = []
  const added: ModelUpdate[] = []
  let unchanged = 0
  for (const row of table.rows) {
    const provider = bySlug.get(row.provider)
    if (!provider) {
      skip(skipped, 'of providers not configured here', row.provider)
      continue
    }
    const listed = findModel(provider.models, row)
    if (listed) {
      const key = `${provider.slug} ${listed.id}`
      if (seen.has(key)) skip(skipped, 'a second row for the same model', row.key)
      else if (!isChat(listed)) skip(skipped, 'priced for a model that is not a chat model here', row.key)
      else if ((asOf(listed, today).pricing.currency ?? 'USD') !== 'USD') skip(skipped, 'of models priced here in another currency than USD', row.key)
      else {
        const update = changesOf(row, listed, today)
        if (update) changed.push(update)
        else unchanged++
      }
      seen.add(key)
      continue
    }
    const model = row.newModel
    if (!model) {
      skip(skipped, `not in the catalogue, and ${row.unclear ?? 'no clear model id'}`, row.key)
      continue
    }
    const key = `${provider.slug} ${model.id}`
    if (seen.has(key) || provider.models.some((m) => m.id === model.id)) {
      skip(skipped, 'naming a model the catalogue has under another upstream id', row.key)
      continue
    }
    seen.add(key)
    if (row.expirationDate !== undefined && row.expirationDate <= today) skip(skipped, 'not in the catalogue and retired already', row.key)
    else added.push(addedOf(row))
  }
  return {
    changed: changed.filter((u) => Object.keys(u.prices).length || u.contextLength || u.maxCompletionTokens).sort(byName),
    added: added.sort(byName),
    retired: changed.filter((u) => u.expirationDate).sort(byName),
    unchanged,
    skipped,
  }
}

/** How many models an update writes (a model both changed and retiring counts once). */
export const updateSize = (update: PriceUpdate): number => new Set([...update.changed, ...update.retired, ...update.added]).size

/** The catalogue file with an update written in: each model written carries `source`; the file says it was updated `today`. */
export function applyPriceUpdate(file: CatalogueFile | undefined, update: PriceUpdate, source: ModelSource, today: string): CatalogueFile {
  const next: CatalogueFile = file ? structuredClone(file) : { format: CATALOGUE_FORMAT, version: 1, updated: today, providers: {} }
  next.updated = today
  for (const model of new Set([...update.changed, ...update.retired, ...update.added])) {
    const list = (next.providers[model.provider] ??= [])
    const entry = { ...model.entry, source }
    const at = list.findIndex((m) => m.id === model.id)
    if (at >= 0) list[at] = { ...list[at], ...entry, pricing: { ...list[at].pricing, ...entry.pricing } }
    else list.push(entry)
  }
  // What is written must read back: the same check the gateway makes when it loads the file.
  return parseCatalogueFile(next, '(being written)')
}
