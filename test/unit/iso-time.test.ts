import { describe, expect, it } from 'vitest'
import { isoTime } from '../../src/runtime/iso-time'

describe('isoTime', () => {
  it('writes what Date#toISOString writes, for times in one second and across seconds, days and years', () => {
    const times = [0, 1, 9, 10, 99, 100, 999, 1000, 1_764_300_000_000, 1_764_300_000_007, 1_764_300_000_042, 1_764_300_000_999, 1_764_300_001_000]
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString())
    expect(isoTime(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toBe('2026-12-31T23:59:59.999Z')
    expect(isoTime(Date.UTC(2027, 0, 1))).toBe('2027-01-01T00:00:00.000Z')
  })

  it('agrees with Date on 20,000 random times, a fraction of a millisecond dropped as Date drops it', () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed / 2_147_483_648
    }
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor(random() * 4e12) + (i % 3 === 0 ? 0.5 : 0)
      expect(isoTime(ms)).toBe(new Date(ms).toISOString())
    }
  })

  it('throws on a time Date cannot write, as Date does', () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError)
  })
})
