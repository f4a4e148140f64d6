import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { artifacts, hasChromium, playgroundInBrowser } from '../helpers/browser'

describe.skipIf(!hasChromium)('the playground’s usage dashboard in Chromium', () => {
  const env = playgroundInBrowser()

  it('shows the day’s spend and requests as a chart, by model and by key, the recent generations and the providers’ health', async () => {
    const page = await env.browser.newPage({ viewport: { width: 1200, height: 900 } })
    await page.goto(env.playground.url)
    await page.waitForSelector('body[data-ready="true"]')
    await page.getByRole('button', { name: 'Connect (get a key)' }).click()
    await page.getByRole('button', { name: /Sign in as demo@example.com/ }).click()
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForSelector('body[data-ready="true"]')

    // Two chats with demo/echo, each billed.
    const costs: number[] = []
    for (const text of ['First question', 'Second question']) {
      await page.getByLabel('Message').fill(text)
      await page.getByRole('button', { name: 'Send' }).click()
      await expect.poll(() => page.locator('.cost').count(), { timeout: 10_000 }).toBe(costs.length + 1)
      costs.push(Number((await page.locator('.cost').last().textContent())!.match(/cost (\S+) EUR/)![1]))
    }
    const spent = costs.reduce((a, b) => a + b, 0)

    // Today's bar: two requests, the tallest (nothing else was billed in the window).
    const today = new Date().toISOString().slice(0, 10)
    await expect.poll(() => page.locator(`#usage-chart rect[data-date="${today}"]`).getAttribute('data-requests'), { timeout: 10_000 }).toBe('2')
    expect(await page.locator('#usage-chart rect').count()).toBe(14)
    expect(Number(await page.locator(`#usage-chart rect[data-date="${today}"]`).getAttribute('height'))).toBe(120)
    expect(await page.locator(`#usage-chart rect[data-date="${today}"] title`).textContent()).toContain('2 requests')

    // By model and provider, by key: the two requests and exactly what they cost.
    const byModel = await page.locator('#usage-by-model tr td').allTextContents()
    expect(byModel.slice(0, 3)).toEqual(['demo/echo', 'Demo (offline)', '2'])
    expect(Number(byModel[4])).toBeCloseTo(spent, 9)
    const byKey = await page.locator('#usage-by-key tr td').allTextContents()
    expect(byKey[0]).toMatch(/^[0-9a-f]{12}…$/)
    expect(byKey[1]).toBe('2')

    // The recent generations of this page, newest first, from GET /generation.
    await expect.poll(() => page.locator('#recent tr').count()).toBe(2)
    const recent = await page.locator('#recent tr').first().locator('td').allTextContents()
    expect(recent[0]).toMatch(/^gen-/)
    expect(recent.slice(1, 3)).toEqual(['demo/echo', 'Demo (offline)'])
    expect(recent[3]).toMatch(/^\d+ ms$/)
    expect(Number(recent[5])).toBeCloseTo(costs[1], 9)

    // The health of the providers serving the models used.
    const health = await page.locator('#health tr').first().locator('td').allTextContents()
    expect(health.slice(0, 3)).toEqual(['demo/echo', 'Demo (offline)', 'up'])

    mkdirSync(artifacts, { recursive: true })
    await page.locator('#usage').screenshot({ path: join(artifacts, 'dashboard.png') })
    await page.close()
  })
})
