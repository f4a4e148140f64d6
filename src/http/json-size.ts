// The UTF-8 byte length of JSON.stringify(value), computed without building the text: a hold measures a request's
// prompt by it (docs/money.md), and serialising tens of KB of messages only to count them cost more than parsing them.

// Characters JSON.stringify writes as a six-byte `\u00XX` (controls but \n, \r, \t, \b, \f), as an escape such as
// `\ud83d` (a lone surrogate), or as `\b`, `\f`: rare in text, looked for in one pass; the common escapes are counted
// with indexOf.
const RARE_ESCAPES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff]/
const OTHER_CONTROLS = /[\u0000-\u0007\u000b\u000e-\u001f]/g
// Any character JSON.stringify escapes: one test settles a short string (cheaper there than five indexOf passes).
const ANY_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/
const SHORT = 256

/** Deeper than this the value is measured by JSON.stringify itself (which refuses a circular one, as before). */
const MAX_DEPTH = 256

// How often `char` occurs in `text` (String.prototype.indexOf: native, no allocation).
function occurrences(text: string, char: string): number {
  let count = 0
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) count++
  return count
}

// The lone surrogates of `text` (JSON.stringify writes each as a 6-byte escape such as `\ud83d`; Buffer.byteLength
// counts 3).
function loneSurrogates(text: string): number {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
      else count++
    } else if (c >= 0xdc00 && c <= 0xdfff) count++
  }
  return count
}

// The UTF-8 bytes of a string as JSON.stringify writes it: its quotes, and its escapes.
function jsonStringBytes(text: string): number {
  const utf8 = Buffer.byteLength(text, 'utf8')
  if (text.length < SHORT && !ANY_ESCAPE.test(text)) return utf8 + 2
  // `\"`, `\\`, `\n`, `\r`, `\t`: one byte more each.
  let bytes = utf8 + 2 + occurrences(text, '"') + occurrences(text, '\\') + occurrences(text, '\n') + occurrences(text, '\r') + occurrences(text, '\t')
  if (!RARE_ESCAPES.test(text)) return bytes
  bytes += occurrences(text, '\b') + occurrences(text, '\f') // one byte more each
  const others = text.match(OTHER_CONTROLS)
  if (others) bytes += others.length * 5 // `\u00XX` for one byte
  // A lone surrogate: an escape such as `\ud83d`, six bytes, where Buffer.byteLength counts three. Only where a
  // character is not ASCII.
  if (utf8 !== text.length) bytes += loneSurrogates(text) * 3
  return bytes
}

// The bytes of one value, or -1 for one JSON.stringify leaves out (undefined, a function, a symbol); NaN when it is not
// plain JSON data (a toJSON method, a bigint, too deep), which the caller measures by JSON.stringify itself.
function valueBytes(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return jsonStringBytes(value)
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4 // `null`
    case 'boolean':
      return value ? 4 : 5
    case 'undefined':
    case 'function':
    case 'symbol':
      return -1
    case 'bigint':
      return Number.NaN
  }
  if (value === null) return 4
  if (depth > MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return Number.NaN
  if (Array.isArray(value)) {
    let bytes = 2 + Math.max(0, value.length - 1) // the brackets and the commas
    for (const item of value) {
      const size = valueBytes(item, depth + 1)
      bytes += size === -1 ? 4 : size // left out in an array: `null`
    }
    return bytes
  }
  if (value instanceof String || value instanceof Number || value instanceof Boolean) return Number.NaN
  let bytes = 2
  let entries = 0
  for (const key of Object.keys(value as object)) {
    const size = valueBytes((value as Record<string, unknown>)[key], depth + 1)
    if (size === -1) continue
    bytes += jsonStringBytes(key) + 1 + size
    entries++
  }
  return bytes + Math.max(0, entries - 1)
}

/** The UTF-8 byte length of JSON.stringify(value) (0 when it writes nothing), computed without building the text. */
export function jsonByteLength(value: unknown): number {
  const bytes = valueBytes(value, 0)
  if (bytes === -1) return 0
  if (Number.isNaN(bytes)) {
    const text = JSON.stringify(value) as string | undefined
    return text === undefined ? 0 : Buffer.byteLength(text, 'utf8')
  }
  return bytes
}
