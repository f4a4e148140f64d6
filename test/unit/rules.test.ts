import { describe, expect, it } from 'vitest'
import { applyRulesPatch, mergeRules, modelAllowed, rulesView } from '../../src/policies/rules'
import { readPreferences } from '../../src/routing/planner/preferences'

describe('mergeRules: the strictest of org, user and key wins', () => {
  it('keeps every allowlist, the lowest price per field with its owner, the first owner forcing ZDR or no training', () => {
    const merged = mergeRules([
      ['org', { allowed_providers: ['a', 'b'], max_price: { prompt: '3', request: '0.1' }, data_collection: 'deny' }],
      ['user', undefined],
      ['key', { allowed_providers: ['b'], allowed_models: ['x/*'], max_price: { prompt: '2.5', completion: '9' }, enforce_zdr: true }],
    ])
    expect(merged.allowedProviders).toEqual([
      { owner: 'org', entries: ['a', 'b'] },
      { owner: 'key', entries: ['b'] },
    ])
    expect(merged.allowedModels).toEqual([{ owner: 'key', entries: ['x/*'] }])
    expect(merged.maxPrice).toEqual({
      prompt: { value: '2.5', owner: 'key' },
      request: { value: '0.1', owner: 'org' },
      completion: { value: '9', owner: 'key' },
    })
    expect(merged.zdr).toBe('key')
    expect(merged.denyDataCollection).toBe('org')
    expect(merged.redact).toBeUndefined()
  })

  it('adds up redaction: input or output if any owner asks, the union of kinds, every kind when one names none', () => {
    expect(
      mergeRules([
        ['org', { redact: { input: true, output: false, kinds: ['email'] } }],
        ['key', { redact: { input: false, output: true, kinds: ['iban'] } }],
      ]).redact,
    ).toEqual({ input: true, output: true, kinds: ['iban', 'email'] })
    expect(mergeRules([['user', { redact: { input: false, output: true } }]]).redact).toEqual({
      input: false,
      output: true,
      kinds: ['iban', 'card', 'email', 'phone'],
    })
    expect(mergeRules([['user', { redact: { input: false, output: false } }]]).redact).toBeUndefined()
  })
})

describe('modelAllowed', () => {
  it('matches ids without case and vendor/* prefixes, nothing else', () => {
    expect(modelAllowed(['openai/gpt-4o'], 'OpenAI/GPT-4o')).toBe(true)
    expect(modelAllowed(['anthropic/*'], 'anthropic/claude-sonnet-4')).toBe(true)
    expect(modelAllowed(['anthropic/*'], 'anthropic-x/claude')).toBe(false)
    expect(modelAllowed(['openai/gpt-4o'], 'openai/gpt-4o-mini')).toBe(false)
    expect(modelAllowed([], 'openai/gpt-4o')).toBe(false)
  })
})

describe('applyRulesPatch', () => {
  it('normalises lists and prices, keeps what the patch leaves out, removes what it sets to null', () => {
    const first = applyRulesPatch(undefined, { allowed_models: ['A/B', 'a/b'], max_price: { prompt: '2.50', completion: 0.5, image: null } })
    expect(first).toEqual({ allowed_models: ['a/b'], max_price: { prompt: '2.5', completion: '0.5' } })
    expect(applyRulesPatch(first, { enforce_zdr: true, max_price: null })).toEqual({ allowed_models: ['a/b'], enforce_zdr: true })
    expect(applyRulesPatch(first, { allowed_models: null, max_price: null })).toBeUndefined()
    expect(applyRulesPatch(undefined, { enforce_zdr: false, data_collection: 'allow' })).toBeUndefined()
    expect(rulesView(undefined)).toEqual({
      allowed_models: null,
      allowed_providers: null,
      max_price: null,
      enforce_zdr: false,
      data_collection: null,
      redact: null,
    })
  })
})

describe('readPreferences with rules', () => {
  it('takes the lower max_price field by field and says whose; a request that asked for ZDR itself owns it', () => {
    const rules = mergeRules([['org', { max_price: { prompt: '2', completion: '5' }, enforce_zdr: true }]])
    const preferences = readPreferences({ max_price: { prompt: 1, completion: '7', image: '0.2' }, zdr: true }, [], rules)
    expect(preferences.maxPrice).toEqual({ prompt: 1, completion: '5', image: '0.2' })
    expect(preferences.rules.maxPrice).toEqual({ completion: 'org' })
    expect(preferences.zdr).toBe(true)
    expect(preferences.rules.zdr).toBeUndefined()
    const forced = readPreferences({ zdr: false, data_collection: 'allow' }, [], mergeRules([['user', { enforce_zdr: true, data_collection: 'deny' }]]))
    expect([forced.zdr, forced.denyDataCollection, forced.rules.zdr, forced.rules.denyDataCollection]).toEqual([true, true, 'user', 'user'])
    expect(readPreferences(null, [], mergeRules([])).maxPrice).toBeUndefined()
  })
})
