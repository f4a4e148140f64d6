import { idBytes } from '../crypto/id-bytes'

const hex = (bytes: number) => idBytes(bytes).toString('hex')

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

/** A new id of an output item: `msg_`, `fc_` or `rs_` and 32 hex digits. */
export const newItemId = (prefix: 'msg' | 'fc' | 'rs'): string => `${prefix}_${hex(16)}`
