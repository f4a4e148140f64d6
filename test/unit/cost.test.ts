import { describe, expect, it } from 'vitest'
import { priceUsage } from '../../src/billing/cost'
import { decimal, multiply, toLedgerUnits } from '../../src/billing/decimal'
import { fromUnits } from '../../src/billing/money'
import { stringifyExact, ExactNumber } from '../../src/http/exact-json'

const usage = (prompt: number, completion: number, extra: object = {}) => ({ prompt_tokens: prompt, completion_tokens: completion, ...extra })
const text = (units: bigint) => fromUnits(units)

describe('exact decimals', () => {
  it('multiplies and rounds half away from zero once, at 12 digits', () => {
    expect(text(toLedgerUnits(multiply(decimal('0.0000000000015'), decimal(1))))).toBe('0.000000000002')
    expect(text(toLedgerUnits(multiply(decimal('0.0000000000014999'), decimal(1))))).toBe('0.000000000001')
    expect(text(toLedgerUnits(decimal('-0.0000000000005')))).toBe('-0.000000000001')
    expect(text(toLedgerUnits(multiply(decimal('0.1'), decimal(3))))).toBe('0.3')
    expect(text(toLedgerUnits(decimal(0.1)))).toBe('0.1')
    expect(() => decimal('1e-7')).toThrow(TypeError)
  })
})

describe('priceUsage', () => {
  const pricing = { prompt: '0.00000015', completion: '0.0000006', currency: 'USD' }

  it('prices prompt and completion tokens exactly and converts to EUR with one rounding', () => {
    const cost = priceUsage(pricing, usage(1234, 567), {}, '0.86')
    // 1234 × 0.00000015 + 567 × 0.0000006 = 0.0001851 + 0.0003402
    expect(text(cost.units)).toBe('0.0005253')
    expect(text(cost.promptUnits)).toBe('0.0001851')
    expect(text(cost.completionUnits)).toBe('0.0003402')
    expect(text(cost.eurUnits)).toBe('0.000451758')
    expect(cost.currency).toBe('USD')
  })

  it('prices cached reads and cache writes at their own prices, the rest of the prompt at the prompt price', () => {
    const cost = priceUsage(
      { ...pricing, input_cache_read: '0.000000075', input_cache_write: '0.0000003' },
      usage(1000, 0, { prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 100 } }),
      {},
      '1',
    )
    // 300 × 0.00000015 + 600 × 0.000000075 + 100 × 0.0000003
    expect(text(cost.units)).toBe('0.00012')
  })

  it('prices reasoning tokens at internal_reasoning when the model has that price', () => {
    const reasoning = usage(0, 100, { completion_tokens_details: { reasoning_tokens: 40 } })
    expect(text(priceUsage(pricing, reasoning, {}, '1').units)).toBe('0.00006')
    expect(text(priceUsage({ ...pricing, internal_reasoning: '0.000001' }, reasoning, {}, '1').units)).toBe('0.000076')
  })

  it('adds the per-request, per-image and per-search prices', () => {
    const cost = priceUsage({ ...pricing, request: '0.005', image: '0.001', web_search: '0.004' }, usage(0, 0), { images: 2, webSearches: 1 }, '1')
    expect(text(cost.units)).toBe('0.011')
  })

  it('rounds sub-unit costs half up, once per amount', () => {
    const cost = priceUsage({ prompt: '0.0000000000003', completion: '0', currency: 'USD' }, usage(5, 0), {}, '0.5')
    expect(text(cost.units)).toBe('0.000000000002') // 0.0000000000015 → up
    expect(text(cost.eurUnits)).toBe('0.000000000001') // 0.00000000000075 → up
  })
})

describe('stringifyExact', () => {
  it('writes exact numbers as plain decimals, never with an exponent', () => {
    expect(stringifyExact({ cost: new ExactNumber('0.0000001'), n: 1e-7, nested: [new ExactNumber('12.5')] })).toBe(
      '{"cost":0.0000001,"n":1e-7,"nested":[12.5]}',
    )
    expect(JSON.parse(stringifyExact({ cost: new ExactNumber('0.000451758') })).cost).toBe(0.000451758)
  })
})

describe('long-context prices', () => {
  const pricing = {
    prompt: '0.000002',
    completion: '0.00001',
    input_cache_read: '0.0000002',
    currency: 'USD',
    long_context: { above_prompt_tokens: 1000, prompt: '0.000004', completion: '0.000015', input_cache_read: '0.0000004' },
  }

  it('bill a prompt up to the threshold at the plain prices', () => {
    // 1000 × 0.000002 + 10 × 0.00001
    expect(text(priceUsage(pricing, usage(1000, 10), {}, '1').units)).toBe('0.0021')
  })

  it('bill the whole request past the threshold at the long-context prices, cached tokens and completion included', () => {
    // 801 uncached × 0.000004 + 200 cached × 0.0000004 + 10 × 0.000015
    const cost = priceUsage(pricing, usage(1001, 10, { prompt_tokens_details: { cached_tokens: 200 } }), {}, '0.86')
    expect(text(cost.units)).toBe('0.003434')
    expect(text(cost.promptUnits)).toBe('0.003284')
    expect(text(cost.completionUnits)).toBe('0.00015')
    expect(text(cost.eurUnits)).toBe('0.00295324')
  })
})
