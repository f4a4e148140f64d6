import { ExactNumber, stringifyExact } from '../http/exact-json'

// The fields of a usage object that say what the request cost: a hit shows its fee there.
const COST_FIELDS = new Set(['cost', 'cost_eur'])

// A usage object as a hit shows it: every count and amount 0 (nested ones too), the costs the hit's fee in EUR.
function hitUsage(usage: unknown, fee: ExactNumber, key?: string): unknown {
  if (key !== undefined && COST_FIELDS.has(key) && (typeof usage === 'number' || typeof usage === 'string')) return fee
  if (key === 'cost_currency' && typeof usage === 'string') return 'EUR'
  if (key === 'is_byok' && typeof usage === 'boolean') return false
  if (typeof usage === 'number') return 0
  if (Array.isArray(usage)) return usage.map((item) => hitUsage(item, fee))
  if (usage && typeof usage === 'object')
    return Object.fromEntries(Object.entries(usage as Record<string, unknown>).map(([name, value]) => [name, hitUsage(value, fee, name)]))
  return usage
}

// Every `usage` object in a JSON value, at any depth, as a hit shows it.
function withHitUsage(value: unknown, fee: ExactNumber): unknown {
  if (Array.isArray(value)) return value.map((item) => withHitUsage(item, fee))
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([name, field]) => [
      name,
      name === 'usage' && field && typeof field === 'object' ? hitUsage(field, fee) : withHitUsage(field, fee),
    ]),
  )
}

/** A whole answer's JSON text as a hit answers it (docs/cache.md#what-a-hit-replays): its usage counts 0, its cost the hit's fee. */
export function wholeHitText(text: string, fee: string): string {
  return stringifyExact(withHitUsage(JSON.parse(text), new ExactNumber(fee)))
}

/**
 * A stream's SSE text as a hit replays it (docs/cache.md#what-a-hit-replays): every line byte for byte, but for the
 * `data:` lines whose JSON carries a `usage` object, written again with it as a hit shows it.
 */
export function streamHitText(text: string, fee: string): string {
  const exact = new ExactNumber(fee)
  return text
    .split('\n')
    .map((line) => {
      if (!line.startsWith('data: {') || !line.includes('"usage":{')) return line
      try {
        return `data: ${stringifyExact(withHitUsage(JSON.parse(line.slice(6)), exact))}`
      } catch {
        return line
      }
    })
    .join('\n')
}
