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
    expect(maskSecret('sk-proj-abcdefghijklmnop1234')).toBe('sk-…1234')
    expect(maskSecret('AIzaSyD-whatever-wxyz')).toBe('…wxyz')
  })
})
