import { idHex } from '../crypto/id-bytes'

const hex = (bytes: number) => idHex(bytes)

/**
 * A new response id: `resp_`, the creation time (epoch ms, 12 hex digits: the retention sweep reads it from the key)
 * and 32 random hex digits (docs/responses.md#stored-responses).
 */
export const newResponseId = (now: number): string => `resp_${Math.floor(now).toString(16).padStart(12, '0')}${hex(16)}`

/** When a response id says it was created (epoch ms), or undefined for an id that is not one of ours. */
export function responseIdTime(id: string): number | undefined {
  const match = /^resp_([0-9a-f]{12})[0-9a-f]+$/.exec(id)
  return match ? Number.parseInt(match[1], 16) : undefined
}

/** The prefixes of item ids: messages, function calls, their outputs, reasoning (docs/responses.md#item-ids). */
export type ItemPrefix = 'msg' | 'fc' | 'fco' | 'rs'

// The 44 hex digits of a response id of ours, which its items' ids carry.
const RESPONSE_HEX = /^resp_([0-9a-f]{44})$/

/**
 * A new id of an output item (docs/responses.md#item-ids): its prefix, the 44 hex digits of its response's id and 8
 * random hex digits, so that an `item_reference` finds the response that holds it.
 */
export const newItemId = (prefix: ItemPrefix, responseId: string): string => `${prefix}_${RESPONSE_HEX.exec(responseId)?.[1] ?? hex(22)}${hex(4)}`

/** The id of the `index`-th input item of a stored response that was sent without one: its response's hex and 6 hex digits. */
export const inputItemId = (prefix: ItemPrefix, responseId: string, index: number): string =>
  `${prefix}_${RESPONSE_HEX.exec(responseId)?.[1] ?? ''}${index.toString(16).padStart(6, '0')}`

/** The response an item id of ours names (`resp_…`), or undefined for an id the gateway did not make. */
export function responseIdOfItem(itemId: string): string | undefined {
  const match = /^(?:msg|fc|fco|rs)_([0-9a-f]{44})(?:[0-9a-f]{6}|[0-9a-f]{8})$/.exec(itemId)
  return match ? `resp_${match[1]}` : undefined
}
