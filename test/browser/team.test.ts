import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { describe, expect, it } from 'vitest'
import { toUnits } from '../../src/billing/money'
import { loadSecret } from '../../src/cli/secret'
import { createGateway, demo } from '../../src/index'
import { artifacts, hasChromium, playgroundInBrowser } from '../helpers/browser'

// The playground's team demo (playground/team.ts, docs/first-party.md): host users signed in by the playground's own
// cookie chat with no key, from the page and on the server (in process), each within a budget of their own.

/** The cost in the last answer's line: "5 + 3 tokens, cost 0.000000946 EUR" → its exact units. */
async function lastCost(page: Page): Promise<bigint> {
  const text = await page.locator('.answer .cost').first().textContent()
  expect(text).toMatch(/^\d+ \+ \d+ tokens, cost 0\.\d+ EUR$/)
  return toUnits(text!.match(/cost (\S+) EUR/)![1])
}

/** What the budget shows as used in the current window, in exact units. */
const usedOf = async (page: Page) => toUnits((await page.locator('#budget-used').textContent())!)

/** The spend-per-user table: its rows as [user, requests, spend]. */
const spendRows = (page: Page) => page.locator('#spend tr').evaluateAll((rows) => rows.map((tr) => [...tr.children].map((td) => td.textContent)))

/** Types a message and presses one of the two ask buttons; waits for the answers or the status to change. */
async function ask(page: Page, text: string, button: 'Ask from the page' | 'Ask on the server') {
  const answers = await page.locator('.answer').count()
  await page.getByLabel('Message').fill(text)
  await page.getByRole('button', { name: button }).click()
  await expect
    .poll(async () => (await page.locator('.answer').count()) > answers || /^Error/.test((await page.locator('#chat-status').textContent()) ?? ''), {
      timeout: 10_000,
    })
    .toBe(true)
}

describe.skipIf(!hasChromium)('the playground’s team demo in Chromium', () => {
  const env = playgroundInBrowser()

  it('signs Ada and Linus in, chats with no key from the page and on the server within their budgets, shows the spend per user, refuses a forged cross-site post and shows the 402 past the budget', async () => {
    expect(env.playground.output()).toContain(`Team demo (first-party, no key): ${env.playground.url}/team`)
    const context = await env.browser.newContext({ viewport: { width: 1000, height: 900 } })
    const page = await context.newPage()
    // No request of the page carries a key.
    const authorizations: string[] = []
    page.on('request', (request) => {
      const header = request.headers().authorization
      if (header) authorizations.push(header)
    })
    await page.goto(`${env.playground.url}/team`)
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#who').count()).toBe(0)

    // Ada signs in: her budget is there before her first request (0.5 EUR a day, 10 requests a minute), nothing used.
    await page.getByRole('button', { name: 'Sign in as Ada' }).click()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#who').textContent()).toBe('Ada')
    await expect.poll(() => page.locator('#budget-limit').textContent()).toBe('0.5 (daily)')
    expect(await page.locator('#budget-used').textContent()).toBe('0')
    expect(await page.locator('#budget-remaining').textContent()).toBe('0.5')
    expect(await page.locator('#budget-rate').textContent()).toBe('10')
    expect(await page.locator('#team-credits').textContent()).toBe('5')

    // From the page: the gateway's own route with the cookie; the answer, its cost, the budget used up by exactly it.
    await ask(page, 'Hello from Ada', 'Ask from the page')
    expect(await page.locator('.answer').first().getAttribute('data-via')).toBe('page')
    expect(await page.locator('.answer .text').first().textContent()).toBe('From the page: Echo: Hello from Ada')
    const pageCost = await lastCost(page)
    expect(pageCost).toBeGreaterThan(0n)
    await expect.poll(() => usedOf(page)).toBe(pageCost)
    expect(toUnits((await page.locator('#budget-remaining').textContent())!)).toBe(toUnits('0.5') - pageCost)

    // On the server: POST /team/ask runs the in-process client of the request's session user.
    await ask(page, 'Hello from the server', 'Ask on the server')
    expect(await page.locator('.answer').first().getAttribute('data-via')).toBe('server')
    expect(await page.locator('.answer .text').first().textContent()).toBe('On the server: Echo: Hello from the server')
    const serverCost = await lastCost(page)
    await expect.poll(() => usedOf(page)).toBe(pageCost + serverCost)
    expect(toUnits((await page.locator('#team-credits').textContent())!)).toBe(toUnits('5') - pageCost - serverCost)

    // The team's spend per user: Ada's two requests, exactly what they cost; Linus nothing yet.
    const adaSpend = ['Ada (ada@example.com)', '2', (await page.locator('#budget-used').textContent())!]
    await expect.poll(() => spendRows(page)).toEqual([adaSpend, ['Linus (linus@example.com)', '0', '0']])
    expect(toUnits(adaSpend[2])).toBe(pageCost + serverCost)

    // A forged post from another site, with Ada's cookie: refused by the gateway's route and by the playground's.
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ')
    expect(cookie).toMatch(/^playground_team=ada\./)
    const forged = { cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }
    const viaGateway = await fetch(`${env.playground.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: forged,
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'forged' }] }),
    })
    expect(viaGateway.status).toBe(403)
    expect((await viaGateway.json()).error.metadata).toEqual({ reason: 'cross_site_session_request' })
    const viaServer = await fetch(`${env.playground.url}/team/ask`, { method: 'POST', headers: forged, body: JSON.stringify({ text: 'forged' }) })
    expect(viaServer.status).toBe(403)
    expect((await viaServer.json()).error.metadata).toEqual({ reason: 'cross_site_session_request' })
    // Without a team cookie, the spend is nobody's to read.
    expect((await fetch(`${env.playground.url}/team/spend`)).status).toBe(401)
    // Nothing was charged for them.
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    await expect.poll(() => usedOf(page)).toBe(pageCost + serverCost)
    await expect.poll(() => spendRows(page)).toEqual([adaSpend, ['Linus (linus@example.com)', '0', '0']])

    // Linus: his own budget, his own spend.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#who').count()).toBe(0)
    await page.getByRole('button', { name: 'Sign in as Linus' }).click()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#who').textContent()).toBe('Linus')
    await expect.poll(() => page.locator('#budget-limit').textContent()).toBe('1 (daily)')
    expect(await page.locator('#budget-used').textContent()).toBe('0')
    await ask(page, 'Hello from Linus', 'Ask from the page')
    expect(await page.locator('.answer .text').first().textContent()).toBe('From the page: Echo: Hello from Linus')
    const linusCost = await lastCost(page)
    await expect.poll(() => usedOf(page)).toBe(linusCost)
    await expect.poll(() => spendRows(page)).toEqual([adaSpend, ['Linus (linus@example.com)', '1', (await page.locator('#budget-used').textContent())!]])
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: join(artifacts, 'team.png'), fullPage: true })

    // Ada again, her credit limit lowered (through the admin API, on the playground's folder) to what she spent.
    const dataDir = env.dataDir
    const admin = createGateway({
      storage: createStorage({ driver: fsDriver({ base: join(dataDir, 'storage') }) }),
      secret: loadSecret(dataDir, { env: {} }).secret,
      providers: [demo()],
      logger: false,
    })
    try {
      const ada = (await admin.admin.findUserByEmail('ada@example.com'))!
      expect(ada.org_id).toBe('playground-team')
      await admin.admin.setUserLimits(ada.id, { credit_limit: adaSpend[2] })
    } finally {
      await admin.close()
    }
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForSelector('body[data-ready="true"]')
    await page.getByRole('button', { name: 'Sign in as Ada' }).click()
    await page.waitForSelector('body[data-ready="true"]')
    // The playground's instance sees the change within a second (docs/keys.md#the-authentication-cache).
    await expect
      .poll(
        async () => {
          await page.reload()
          await page.waitForSelector('body[data-ready="true"]')
          return page.locator('#budget-limit').textContent()
        },
        { timeout: 10_000 },
      )
      .toBe(`${adaSpend[2]} (daily)`)
    expect(await page.locator('#budget-remaining').textContent()).toBe('0')

    // Past her budget: the page shows the gateway's 402, from the page and on the server, and nothing more is spent.
    await ask(page, 'One more', 'Ask from the page')
    expect(await page.locator('#chat-status').textContent()).toMatch(/^Error 402: .*credit limit/)
    expect(await page.locator('.answer').count()).toBe(0)
    await page.locator('#chat-status').evaluate((status) => (status.textContent = ''))
    await ask(page, 'One more on the server', 'Ask on the server')
    expect(await page.locator('#chat-status').textContent()).toMatch(/^Error 402: .*credit limit/)
    await expect.poll(() => spendRows(page)).toEqual([adaSpend, ['Linus (linus@example.com)', '1', expect.any(String)]])
    expect(await usedOf(page)).toBe(pageCost + serverCost)

    expect(authorizations).toEqual([])
    await context.close()
  }, 90_000)
})
