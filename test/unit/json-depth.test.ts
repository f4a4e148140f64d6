import { describe, expect, it } from 'vitest'
import { prng } from '../helpers/fuzz'
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../../src/http/json-depth'

// The depth check (src/http/json-depth.ts) skips a string's content from quote to quote; what it answers must be what
// a plain loop over every byte answers: the reference below, the check as it was written first.
function referenceExceeds(json: string, limit: number): boolean {
  const bytes = new TextEncoder().encode(json)
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

describe('exceedsJsonDepth', () => {
  it('counts brackets outside strings only, escaped quotes and backslashes included', () => {
    expect(exceedsJsonDepth('[[[1]]]', 2)).toBe(true)
    expect(exceedsJsonDepth('[[[1]]]', 3)).toBe(false)
    expect(exceedsJsonDepth('["[[[[", {"a": "]]]]"}]', 2)).toBe(false)
    // An escaped quote does not end the string; an escaped backslash before a quote does not escape it.
    expect(exceedsJsonDepth('["a\\"[[[[", 1]', 2)).toBe(false)
    expect(exceedsJsonDepth('["a\\\\", [[[1]]]]', 2)).toBe(true)
    expect(exceedsJsonDepth('["a\\\\\\"[[[[", 1]', 2)).toBe(false)
    // An unterminated string is not JSON: left for JSON.parse to refuse.
    expect(exceedsJsonDepth('["abc [[[[[[', 2)).toBe(false)
    // Bytes and text answer alike, multi-byte characters included.
    const deep = `{"é😀":${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}}`
    expect(exceedsJsonDepth(deep)).toBe(true)
    expect(exceedsJsonDepth(new TextEncoder().encode(deep))).toBe(true)
    expect(exceedsJsonDepth(`{"é😀":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`)).toBe(false)
  })

  it('answers as a loop over every byte does, over 20,000 random texts of quotes, backslashes and brackets', () => {
    const alphabet = ['"', '\\', '[', ']', '{', '}', 'a', ' ', ':', ',', 'é', '😀']
    for (let seed = 1; seed <= 20_000; seed++) {
      const next = prng(seed).next
      const length = 1 + Math.floor(next() * 40)
      let text = ''
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(next() * alphabet.length)]
      const limit = 1 + Math.floor(next() * 4)
      const expected = referenceExceeds(text, limit)
      if (exceedsJsonDepth(text, limit) !== expected || exceedsJsonDepth(new TextEncoder().encode(text), limit) !== expected)
        throw new Error(`seed ${seed}: ${JSON.stringify(text)} at limit ${limit}: expected ${expected}`)
    }
  })
})
