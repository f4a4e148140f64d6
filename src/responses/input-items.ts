import { invalidRequest } from '../errors'
import type { Json } from './json'
import { listedItem } from './items'

/** What a page of input items is cut by: the query of GET /responses/{id}/input_items, validated. */
export interface PageQuery {
  order: 'asc' | 'desc'
  limit: number
  after?: string
  before?: string
  include: string[]
}

// The position of a cursor in the ordered items; an id that is not one of them is a 400 naming the cursor.
function cursorAt(items: Json[], id: string, param: 'after' | 'before'): number {
  const at = items.findIndex((item) => item.id === id)
  if (at < 0) throw invalidRequest(`${param}: item '${id}' is not an input item of this response`, param)
  return at
}

/**
 * One page of a stored response's input items in OpenAI's list shape (docs/responses.md#input-items-of-a-stored-response):
 * in `order`, at most `limit`, those after the `after` item and before the `before` item (the `limit` nearest to it),
 * `has_more` when more lie beyond the page in the direction it was read.
 */
export function inputItemsPage(items: Json[], query: PageQuery): Json {
  const ordered = query.order === 'asc' ? items : [...items].reverse()
  const start = query.after === undefined ? 0 : cursorAt(ordered, query.after, 'after') + 1
  const end = query.before === undefined ? ordered.length : cursorAt(ordered, query.before, 'before')
  const span = ordered.slice(start, Math.max(start, end))
  const page = query.before !== undefined && query.after === undefined ? span.slice(-query.limit) : span.slice(0, query.limit)
  const data = page.map((item) => listedItem(item, query.include))
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: page.length < span.length,
  }
}
