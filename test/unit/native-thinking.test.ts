import { describe, expect, it } from 'vitest'
import { thinkingForModel } from '../../src/messages/native-thinking'
import { answeredModel } from '../../src/messages/model-id'
import type { ClaudeTraits } from '../../src/providers/anthropic-translate'

// Unit tests of what a native Messages request is made into for the model that serves it (src/messages/native-thinking.ts)
// and of the model id its answer names (src/messages/model-id.ts). docs/native.md#messages, docs/messages.md#models.

const BUDGET: ClaudeTraits = { thinking: 'budget', thinkingAlwaysOn: false, maxOutputTokens: 64_000 }
const ADAPTIVE: ClaudeTraits = { thinking: 'adaptive', thinkingAlwaysOn: false, efforts: ['low', 'medium', 'high'] }
const ALWAYS_ON: ClaudeTraits = { ...ADAPTIVE, thinkingAlwaysOn: true }
const base = { model: 'm', max_tokens: 32_000, messages: [{ role: 'user', content: 'Hi' }] }

describe('thinkingForModel', () => {
  it('turns adaptive thinking with an effort into a budget of the effort’s share of max_tokens on a budget model, the effort left out', () => {
    const body = { ...base, thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'high' } }
    expect(thinkingForModel(body, BUDGET)).toEqual({ ...base, thinking: { type: 'enabled', budget_tokens: 25_600, display: 'omitted' } })
    expect(thinkingForModel({ ...body, output_config: { effort: 'low' } }, BUDGET).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 6400,
      display: 'omitted',
    })
    // Without an effort: half of max_tokens.
    expect(thinkingForModel({ ...base, thinking: { type: 'adaptive' } }, BUDGET)).toEqual({ ...base, thinking: { type: 'enabled', budget_tokens: 16_000 } })
  })

  it('keeps the budget at 1,024 or more, below max_tokens, and leaves thinking out when max_tokens leaves no room', () => {
    const adaptive = { thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }
    expect(thinkingForModel({ ...base, ...adaptive, max_tokens: 1500 }, BUDGET).thinking).toEqual({ type: 'enabled', budget_tokens: 1425 })
    expect(thinkingForModel({ ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'low' }, max_tokens: 1100 }, BUDGET).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    })
    expect(thinkingForModel({ ...base, ...adaptive, max_tokens: 1024 }, BUDGET)).toEqual({ ...base, max_tokens: 1024 })
  })

  it('leaves out an effort a budget model cannot take, keeping the rest of output_config and an enabled budget', () => {
    const format = { type: 'json_schema', schema: { type: 'object' } }
    expect(thinkingForModel({ ...base, output_config: { effort: 'medium', format } }, BUDGET)).toEqual({ ...base, output_config: { format } })
    const enabled = { ...base, thinking: { type: 'enabled', budget_tokens: 2048 } }
    expect(thinkingForModel({ ...enabled, output_config: { effort: 'medium' } }, BUDGET)).toEqual(enabled)
    expect(thinkingForModel(base, BUDGET)).toBe(base)
  })

  it('turns a budget into adaptive thinking with the nearest listed effort on an adaptive model; an unlisted effort becomes the nearest listed', () => {
    expect(thinkingForModel({ ...base, thinking: { type: 'enabled', budget_tokens: 31_999 } }, ADAPTIVE)).toEqual({
      ...base,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    })
    expect(thinkingForModel({ ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }, ADAPTIVE)).toEqual({
      ...base,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    })
    const listed = { ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } }
    expect(thinkingForModel(listed, ADAPTIVE)).toBe(listed)
  })

  it('leaves out `disabled` on a model that always thinks', () => {
    expect(thinkingForModel({ ...base, thinking: { type: 'disabled' } }, ALWAYS_ON)).toEqual(base)
  })
})

describe('answeredModel', () => {
  it('names the bare id the client sent when the model it named served, else the gateway id', () => {
    const bare = answeredModel('claude-haiku-4-5', 'anthropic/claude-haiku-4.5')
    expect(bare('anthropic/claude-haiku-4.5')).toBe('claude-haiku-4-5')
    expect(bare('anthropic/claude-sonnet-5.5')).toBe('anthropic/claude-sonnet-5.5')
    expect(answeredModel('anthropic/claude-haiku-4.5', 'anthropic/claude-haiku-4.5')('anthropic/claude-haiku-4.5')).toBe('anthropic/claude-haiku-4.5')
    expect(answeredModel(undefined, undefined)('openai/gpt-5')).toBe('openai/gpt-5')
  })
})
