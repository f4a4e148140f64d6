import { ExactNumber } from '../http/exact-json'
import type { Json } from './json'

const TOKEN_RE = /"(?:[^"\\]|\\.)*"|-?\d+\.\d+(?![\d.eE])/g
const MARK = '\u0000exact-in:'
const DECIMAL_RE = /^-?\d+\.\d+$/

/**
 * JSON.parse that keeps every decimal number (one with a fraction) as an ExactNumber, so that the costs of chat's
 * answer are written back exactly as chat wrote them (docs/chat.md#usage-and-cost).
 */
export function parseExact(text: string): Json {
  // The mark is written escaped (a raw control character is not allowed in a JSON string) and read back raw.
  const marked = text.replace(TOKEN_RE, (token) => (token.startsWith('"') ? token : `"\\u0000exact-in:${token}"`))
  return JSON.parse(marked, (_key, value) =>
    typeof value === 'string' && value.startsWith(MARK) && DECIMAL_RE.test(value.slice(MARK.length)) ? new ExactNumber(value.slice(MARK.length)) : value,
  )
}
