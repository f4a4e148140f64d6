import type { ResolvedItem } from '../schemas/responses'
import { inputItemId, type ItemPrefix } from './ids'
import type { Json } from './json'

const PREFIXES: Record<string, ItemPrefix> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' }

/**
 * The input items of a stored response, each with an id (docs/responses.md#item-ids): an item sent without one gets
 * `<prefix>_<the response's hex><its index>`, the same whether it is given when stored or when an older record (stored
 * without them) is read. `offset` is the index in the stored input of the first of `items`.
 */
export const withItemIds = (items: ResolvedItem[], responseId: string, offset = 0): ResolvedItem[] =>
  items.map((item: Json, i) =>
    typeof item.id === 'string' && item.id ? item : { ...item, id: inputItemId(PREFIXES[String(item.type ?? 'message')] ?? 'msg', responseId, offset + i) },
  ) as ResolvedItem[]

/** An input item as GET /responses/{id}/input_items lists it: its `type` spelled out, text content as parts. */
export function listedItem(item: Json, include: string[]): Json {
  const listed: Json = { ...item, type: item.type ?? 'message' }
  if (listed.type === 'message' && typeof item.content === 'string')
    listed.content = [item.role === 'assistant' ? { type: 'output_text', text: item.content, annotations: [] } : { type: 'input_text', text: item.content }]
  if (listed.type === 'reasoning' && !include.includes('reasoning.encrypted_content')) delete listed.encrypted_content
  return listed
}
