/**
 * A 400 names the field that failed, also inside a union no branch took (docs/errors.md): the deepest issue of the
 * union's branches is reported.
 */
import { describe, expect, it } from 'vitest'
import type { GatewayError } from '../../src/errors'
import { parseInput } from '../../src/http/validate'
import { responsesRequestSchema } from '../../src/schemas/responses'

const refusal = (input: unknown) => {
  try {
    parseInput(responsesRequestSchema, { model: 'openai/gpt-test', input }, 'body')
  } catch (error) {
    return error as GatewayError
  }
  throw new Error('accepted')
}

describe('the issue a 400 reports', () => {
  it('names the item field inside `input` (a string or a list of items) that failed', () => {
    // A function_call_output answering no call and naming no output of its own.
    const error = refusal([
      { role: 'user', content: 'hi' },
      { type: 'function_call_output', output: 'done' },
    ])
    expect(error.status).toBe(400)
    expect(error.param).toBe('input.1.call_id')
    expect(error.message).toBe('input.1.call_id: is required')
  })

  it('keeps the union’s own message when the value is neither branch', () => {
    const error = refusal(42)
    expect(error.param).toBe('input')
    expect(error.message).toMatch(/^input: /)
  })
})
