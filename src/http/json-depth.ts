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

const utf8 = new TextDecoder()

/**
 * True when JSON text nests arrays and objects deeper than `limit`, counting `[` and `{` outside strings. One pass,
 * no recursion, no parse; text that is not valid JSON is left for JSON.parse to refuse. A string's content is skipped
 * with `indexOf` from quote to quote: most of a chat request is its messages' text, and a loop over every character of
 * a 67 KB body cost twice JSON.parse of it (docs/limits.md). Bytes are read as UTF-8 (a caller that parses them next
 * decodes them once and passes the text).
 */
export function exceedsJsonDepth(json: Uint8Array | string, limit: number = MAX_JSON_DEPTH): boolean {
  if (json.length <= limit) return false // deeper nesting needs more than `limit` opening characters
  // Decoding never moves an ASCII character (an invalid sequence becomes U+FFFD without taking the next byte), and
  // the quote, the backslash and the brackets are ASCII: the text has the bytes' structure.
  const text = typeof json === 'string' ? json : utf8.decode(json)
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = closingQuote(text, i)
      if (end === -1) return false // an unterminated string: not JSON
      i = end
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
  }
  return false
}

// The index of the quote that closes the string opened at `open`: the first quote after it that is not escaped, that
// is not preceded by an odd number of backslashes (each backslash is looked at once: a run ends at the quote after it).
function closingQuote(text: string, open: number): number {
  let from = open + 1
  for (;;) {
    const quote = text.indexOf('"', from)
    if (quote === -1) return -1
    let backslashes = 0
    for (let k = quote - 1; k > open && text.charCodeAt(k) === BACKSLASH; k--) backslashes++
    if (backslashes % 2 === 0) return quote
    from = quote + 1
  }
}
