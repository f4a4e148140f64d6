/**
 * The deepest nesting of arrays and objects a JSON input may have (docs/limits.md). Deeper input is refused before
 * it is parsed: parsing it costs time, and walking or serialising it again (JSON.stringify, schema translation)
 * would overflow the stack.
 */
export const MAX_JSON_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d

/**
 * True when JSON text (UTF-8 bytes or a string) nests arrays and objects deeper than `limit`, counting `[` and `{`
 * outside strings. One pass over the bytes, no recursion, no parse; text that is not valid JSON is left for
 * JSON.parse to refuse.
 */
export function exceedsJsonDepth(json: Uint8Array | string, limit: number = MAX_JSON_DEPTH): boolean {
  if (json.length <= limit) return false // deeper nesting needs more than `limit` opening characters
  const bytes = typeof json === 'string' ? new TextEncoder().encode(json) : json
  let depth = 0
  let inString = false
  // A byte loop: in UTF-8 the quote, the backslash and the brackets never occur inside a multi-byte character.
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (inString) {
      if (c === BACKSLASH)
        i++ // the escaped character
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
  }
  return false
}
