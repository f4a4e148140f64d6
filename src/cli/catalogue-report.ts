import { PRICE_FIELDS, type ModelUpdate, type PriceField, type PriceUpdate } from '../catalogue/price-update'
import { count, money, perMillion } from './format'

// What `catalogue update` prints of an update: changed, new and retired models, then what was left out.

const LABELS: Record<PriceField, string> = {
  prompt: 'input',
  completion: 'output',
  input_cache_read: 'cache read',
  input_cache_write: 'cache write',
  internal_reasoning: 'reasoning',
  request: 'request',
  image: 'image',
  web_search: 'web search',
}
const PER_UNIT = new Set<PriceField>(['request', 'image', 'web_search'])

// "old → new" for a change ("-" when there was none), the value alone for a new model (a change without `before`).
function was<T>(change: { before?: T; after: T }, show: (value: T | undefined) => string): string {
  return 'before' in change ? `${show(change.before)} → ${show(change.after)}` : show(change.after)
}
const tokenPrice = (price: string | undefined) => (price === undefined ? '-' : money(perMillion(price)))
const unitPrice = (price: string | undefined) => (price === undefined ? '-' : money(price))

/** The prices of an update as people read them: per million tokens, per unit for requests, images and searches. */
function prices(update: ModelUpdate): string[] {
  const perToken: string[] = []
  const perUnit: string[] = []
  for (const field of PRICE_FIELDS) {
    const change = update.prices[field]
    if (change) (PER_UNIT.has(field) ? perUnit : perToken).push(`${LABELS[field]} ${was(change, PER_UNIT.has(field) ? unitPrice : tokenPrice)}`)
  }
  return [...(perToken.length ? [`${perToken.join(', ')} per 1M tokens`] : []), ...(perUnit.length ? [`${perUnit.join(', ')} each`] : [])]
}

const limit = (label: string, change: ModelUpdate['contextLength']) => (change ? [`${label} ${was(change, count)}`] : [])
const facts = (u: ModelUpdate) => [...prices(u), ...limit('context', u.contextLength), ...limit('max output', u.maxCompletionTokens)].join('; ')

/** One line per model changed: old → new prices per million tokens, context, max output. */
export const changedLine = (u: ModelUpdate): string => `  ${u.id} (${u.provider}): ${facts(u)}`

/** One line per new model, with the upstream id it will be called by. */
export const newLine = (u: ModelUpdate): string => `  ${u.id} (${u.provider}, upstream ${u.entry.upstreamId ?? u.id.slice(u.id.indexOf('/') + 1)}): ${facts(u)}`

/** One line per model whose retirement day is now set or moved. */
export const retiredLine = (u: ModelUpdate): string =>
  `  ${u.id} (${u.provider}): expires ${u.expirationDate!.after}${u.expirationDate!.before ? ` (was ${u.expirationDate!.before})` : ' (no date before)'}`

/** The whole report, grouped: changed, new, retired, then how many models are unchanged and which rows were left out. */
export function reportLines(update: PriceUpdate): string[] {
  const lines: string[] = []
  const group = (title: string, items: ModelUpdate[], line: (u: ModelUpdate) => string) => {
    if (items.length) lines.push(`${title} (${items.length}):`, ...items.map(line))
  }
  group('Changed', update.changed, changedLine)
  group('New', update.added, newLine)
  group('Retired', update.retired, retiredLine)
  lines.push(`Unchanged: ${update.unchanged} model${update.unchanged === 1 ? '' : 's'}.`)
  const skipped = [...update.skipped].sort((a, b) => b[1].count - a[1].count)
  const total = skipped.reduce((n, [, s]) => n + s.count, 0)
  if (total) {
    lines.push(`Skipped ${total} row${total === 1 ? '' : 's'} of the table:`)
    for (const [reason, { count: n, examples }] of skipped) lines.push(`  ${n} ${reason}: ${examples.join(', ')}${n > examples.length ? ', …' : ''}`)
  }
  return lines
}
