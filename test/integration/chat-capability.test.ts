import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo } from '../../src/index'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// A model asked for a capability it lacks is a 400 that says what it serves (docs/chat.md), before any hold or call.

describe('chat with a model that does not chat', () => {
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>
  beforeAll(async () => {
    t = await startGateway({ providers: [demo({ audio: true })] })
    customer = await createCustomer(t.gateway, { credits: '1' })
  })
  afterAll(() => t.close())

  const chat = async (body: Record<string, unknown>) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hello' }], ...body }),
    })
    return { status: res.status, body: await res.json() }
  }

  it('answers 400 naming what a speech or transcription model serves, charging nothing', async () => {
    expect(await chat({ model: 'demo/speech' })).toEqual({
      status: 400,
      body: {
        error: {
          code: 400,
          type: 'invalid_request',
          param: 'model',
          message: expect.stringMatching(
            /^model: demo\/speech does not serve \/chat\/completions \(it serves \/audio\/speech\)\. Models that do: demo\/echo\.$/,
          ),
        },
      },
    })
    const streamed = await chat({ model: 'demo/transcribe', stream: true })
    expect(streamed.status).toBe(400)
    expect(streamed.body.error.message).toMatch(
      /^model: demo\/transcribe does not serve \/chat\/completions \(it serves \/audio\/transcriptions\)\. Models that do: /,
    )
    expect(await t.gateway.admin.getCredits(customer.user.org_id)).toMatchObject({ total_usage: '0' })
    expect(await t.gateway.context.usage.list(customer.user.org_id)).toHaveLength(0)
  })

  it('falls back to a chat model of the models list', async () => {
    const answer = await chat({ model: 'demo/speech', models: ['demo/echo'] })
    expect([answer.status, answer.body.model]).toEqual([200, 'demo/echo'])
  })
})
