import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateApiKey, isWellFormedKey, maskSecret, sha256Hex } from '../../src/crypto/keys'

describe('API keys', () => {
  it('are the prefix and 64 lowercase hex characters, each one different', () => {
    const keys = new Set(Array.from({ length: 100 }, () => generateApiKey()))
    expect(keys.size).toBe(100)
    for (const key of keys) expect(key).toMatch(/^sk-service-v1-[0-9a-f]{64}$/)
  })

  it('honour a configured prefix and reject other shapes', () => {
    const key = generateApiKey('sk-acme-')
    expect(isWellFormedKey(key, 'sk-acme-')).toBe(true)
    expect(isWellFormedKey(key)).toBe(false)
    expect(isWellFormedKey(`sk-service-v1-${'A'.repeat(64)}`)).toBe(false)
    expect(isWellFormedKey(`sk-service-v1-${'a'.repeat(63)}`)).toBe(false)
  })

  it('are stored as the lowercase hex SHA-256 of the whole key', () => {
    const key = generateApiKey()
    expect(sha256Hex(key)).toBe(createHash('sha256').update(key).digest('hex'))
    expect(sha256Hex(key)).toMatch(/^[0-9a-f]{64}$/)
  })

  it('masks secrets to a hint', () => {
    expect(maskSecret('sk-proj-abcdefghijklmnop1234')).toBe('sk-proj-…1234')
    expect(maskSecret('sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789')).toBe('sk-ant-…6789')
    expect(maskSecret('AIzaSyD-whatever-wxyz')).toBe('…wxyz')
  })

  it('never shows anything of a short secret, nor more than half of any', () => {
    expect(maskSecret('sk-abcd')).toBe('sk-…')
    expect(maskSecret('abcdef')).toBe('…')
    expect(maskSecret('sk-abcdefghijkl')).toBe('sk-…') // 15 characters: no tail
    expect(maskSecret('abcdefghijklmnop')).toBe('…mnop') // 16: the last four
    expect(maskSecret('sk-ant-abcdefghi')).toBe('sk-…fghi') // "sk-ant-" and the tail would be 11 of 16
    expect(maskSecret('')).toBe('…')
    for (let length = 0; length <= 40; length++) {
      const secret = `sk-ant-${'x'.repeat(40)}`.slice(0, length)
      const shown = maskSecret(secret).replace('…', '').length
      expect(shown * 2).toBeLessThanOrEqual(length)
      if (length < 16) expect(maskSecret(secret)).toMatch(/^(?:[a-z]+-){0,2}…$/)
    }
  })
})
