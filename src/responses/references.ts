import { invalidRequest } from '../errors'
import type { InputItem, ResolvedItem } from '../schemas/responses'
import { responseIdOfItem } from './ids'

/** The items of a stored response of the org (its input, then its output), or undefined when it has none by that id. */
export type StoredItems = (responseId: string) => Promise<ResolvedItem[] | undefined>

/**
 * Replaces each `item_reference` of the input by the item it names (docs/responses.md#item-references): one of the
 * conversation of `previous_response_id`, else one of the stored response its id names (ids of the gateway's items
 * carry their response's); an id found in neither is a 400 naming the input index.
 */
export async function resolveReferences(items: InputItem[], previous: ResolvedItem[], stored: StoredItems): Promise<ResolvedItem[]> {
  if (!items.some((item) => item.type === 'item_reference')) return items as ResolvedItem[]
  const responses = new Map<string, Promise<ResolvedItem[] | undefined>>()
  const resolved: ResolvedItem[] = []
  for (const [i, item] of items.entries()) {
    if (item.type !== 'item_reference') {
      resolved.push(item)
      continue
    }
    let found = previous.find((candidate) => candidate.id === item.id)
    const responseId = found ? undefined : responseIdOfItem(item.id)
    if (responseId) {
      if (!responses.has(responseId)) responses.set(responseId, stored(responseId))
      found = (await responses.get(responseId))?.find((candidate) => candidate.id === item.id)
    }
    if (!found)
      throw invalidRequest(
        `input.${i}: item '${item.id}' not found: an item_reference must name an input or output item of a stored response of this organization`,
        `input.${i}.id`,
      )
    resolved.push(found)
  }
  return resolved
}
