import { describe, expect, it } from 'vitest'
import { fromUnits, toUnits, UNIT } from '../../src/billing/money'
import { GatewayError } from '../../src/errors'

describe('exact money', () => {
  it('parses decimal strings and numbers without binary noise', () => {
    expect(toUnits('0.1')).toBe(100_000_000_000n)
    expect(toUnits(0.1)).toBe(100_000_000_000n)
    expect(toUnits('12.000000000001')).toBe(12n * UNIT + 1n)
    expect(toUnits('-2.5')).toBe(-2_500_000_000_000n)
    expect(toUnits(1e-7)).toBe(100_000n)
    expect(toUnits(2e21)).toBe(2n * 10n ** 21n * UNIT)
    expect(toUnits('3.10000000000000000000')).toBe(3_100_000_000_000n)
  })

  it('formats plain decimals without exponent or trailing zeros', () => {
    expect(fromUnits(0n)).toBe('0')
    expect(fromUnits(UNIT)).toBe('1')
    expect(fromUnits(100_000_000_000n)).toBe('0.1')
    expect(fromUnits(-1n)).toBe('-0.000000000001')
    expect(fromUnits(123n * UNIT + 450_000_000_000n)).toBe('123.45')
    expect(fromUnits(10n ** 30n)).toBe('1000000000000000000')
  })

  it('adds 0.1 ten times to exactly 1, where floats give 0.9999999999999999', () => {
    let floats = 0
    let units = 0n
    for (let i = 0; i < 10; i++) {
      floats += 0.1
      units += toUnits('0.1')
    }
    expect(floats).not.toBe(1)
    expect(fromUnits(units)).toBe('1')
  })

  it('rejects what is not an exact decimal of at most 12 fractional digits', () => {
    for (const bad of ['abc', '1e5', '', '0.1.2', '1,5', '0.0000000000001']) {
      expect(() => toUnits(bad), bad).toThrow(GatewayError)
    }
    expect(() => toUnits(Number.NaN)).toThrow(/finite/)
  })
})
