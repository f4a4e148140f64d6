import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo, GatewayError } from '../../src/index'
import { startGateway, type TestGateway } from '../helpers/server'

describe('admin.issueKey credit limits', () => {
  let t: TestGateway
  let userId: string
  beforeAll(async () => {
    t = await startGateway({ providers: [demo()] })
    const user = await t.gateway.admin.createUser({ email: 'limits@example.com' })
    await t.gateway.admin.addCredits(user.org_id, '5')
    userId = user.id
  })
  afterAll(() => t.close())

  const chat = (key: string) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
    })

  it('stores a positive exact decimal, string or number, written canonically; null or nothing for no limit', async () => {
    const cases: [string | number | null | undefined, string | null][] = [
      ['10.50', '10.5'], [' 3 ', '3'], [2.5, '2.5'], [0.1, '0.1'], ['0.000000000001', '0.000000000001'], [1e3, '1000'], [null, null], [undefined, null],
    ]
    for (const [creditLimit, stored] of cases) {
      const { record } = await t.gateway.admin.issueKey({ userId, creditLimit })
      expect(record.credit_limit, String(creditLimit)).toBe(stored)
    }
    const { key } = await t.gateway.admin.issueKey({ userId, creditLimit: '10.50' })
    expect((await chat(key)).status).toBe(200)
  })

  it('refuses 0, negatives, exponents, text and more than 12 fractional digits with a 400 naming creditLimit', async () => {
    const before = (await t.gateway.admin.listKeys(userId)).length
    for (const creditLimit of [0, '0', '0.000', -1, '-2.5', 'abc', '1e3', '', '1.0000000000001', Number.NaN, Number.POSITIVE_INFINITY, true, {}]) {
      const attempt = t.gateway.admin.issueKey({ userId, creditLimit: creditLimit as never })
      await expect(attempt, String(creditLimit)).rejects.toBeInstanceOf(GatewayError)
      await attempt.catch((error: GatewayError) => {
        expect(error.status).toBe(400)
        expect(error.param).toBe('creditLimit')
        expect(error.message).toMatch(/^creditLimit: /)
      })
    }
    expect(await t.gateway.admin.listKeys(userId)).toHaveLength(before)
  })
})
