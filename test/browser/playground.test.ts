import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { artifacts, hasChromium, playgroundInBrowser } from '../helpers/browser'

describe.skipIf(!hasChromium)('the playground page in Chromium', () => {
  const env = playgroundInBrowser()

  it('connects, streams a chat answer from demo/echo with its cost and the new balance, and adds and deletes a BYOK key', async () => {
    const page = await env.browser.newPage({ viewport: { width: 1200, height: 800 } })
    await page.goto(env.playground.url)
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#who').textContent()).toBe('Not connected')

    // Get a key through the PKCE flow, with the page itself as the callback.
    await page.getByRole('button', { name: 'Connect (get a key)' }).click()
    await page.getByRole('button', { name: /Sign in as demo@example.com/ }).click()
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#who').textContent()).toBe('demo@example.com')
    expect(await page.locator('#balance').textContent()).toBe('10')
    // The key's limits and built-in rules, from GET /key: the demo key has none.
    await expect
      .poll(() => page.locator('#key-limits').textContent())
      .toBe('Key limit: none · rate: none · tokens: none · spend: none · in flight: none · models: any · providers: any · max price: none · ZDR: no')

    // Chat, streamed.
    expect(await page.locator('#model').inputValue()).toBe('demo/echo')
    await page.getByLabel('Message').fill('Hello from the browser')
    await page.getByRole('button', { name: 'Send' }).click()
    await expect.poll(() => page.locator('.msg.assistant span').last().textContent(), { timeout: 10_000 }).toBe('Echo: Hello from the browser')
    const cost = await page.locator('.cost').last().textContent()
    expect(cost).toMatch(/^\d+ \+ 5 tokens, cost 0\.\d+ EUR$/)
    const charged = cost!.match(/cost (\S+) EUR/)![1]
    await expect.poll(() => page.locator('#balance').textContent()).not.toBe('10')
    const balance = await page.locator('#balance').textContent()
    // The balance shown is the credits minus exactly the request's cost.
    expect(BigInt(Math.round(Number(balance) * 1e12)) + BigInt(Math.round(Number(charged) * 1e12))).toBe(10n * 10n ** 12n)

    // The same conversation through OpenAI's Responses API, then Anthropic's Messages API: each answer streamed, billed.
    for (const [api, text] of [
      ['OpenAI Responses (/responses)', 'Hello through Responses'],
      ['Anthropic Messages (/messages)', 'Hello through Messages'],
    ]) {
      const before = await page.locator('#balance').textContent()
      await page.getByLabel('API', { exact: true }).selectOption({ label: api })
      await page.getByLabel('Message').fill(text)
      await page.getByRole('button', { name: 'Send' }).click()
      await expect.poll(() => page.locator('.msg.assistant span').last().textContent(), { timeout: 10_000 }).toBe(`Echo: ${text}`)
      // The text is whole before the stream ends (its completion and usage events come after the last delta).
      await expect.poll(() => page.locator('#chat-status').textContent()).toBe('')
      await expect.poll(() => page.locator('.cost').count()).toBe(api.startsWith('OpenAI') ? 2 : 3)
      // "Echo: Hello through …": four words, four tokens for the demo.
      expect(await page.locator('.cost').last().textContent()).toMatch(/^\d+ \+ 4 tokens, cost 0\.\d+ EUR$/)
      await expect.poll(() => page.locator('#balance').textContent()).not.toBe(before)
    }
    await page.getByLabel('API', { exact: true }).selectOption('chat')

    // BYOK: add a key for Groq, see it listed (masked), delete it.
    await page.getByLabel('Provider', { exact: true }).selectOption('groq')
    await page.getByLabel('Key', { exact: true }).fill('gsk_playground_secret_4321')
    await page.getByRole('button', { name: 'Add key' }).click()
    await expect.poll(() => page.locator('#byok-status').textContent()).toBe('Added …4321')
    await expect.poll(() => page.locator('#byok-list tr').count()).toBe(1)
    expect(await page.locator('#byok-list').textContent()).not.toContain('secret')
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: join(artifacts, 'playground.png'), fullPage: true })
    await page.getByRole('button', { name: 'Delete …4321' }).click()
    await expect.poll(() => page.locator('#byok-list tr').count()).toBe(0)
    expect(await page.locator('#byok-status').textContent()).toBe('Deleted …4321')

    // Speech, then its transcription (an upload, as OpenAI's clients send it).
    expect(await page.locator('#speech-model').inputValue()).toBe('demo/speech')
    await page.getByRole('button', { name: 'Speak' }).click()
    await expect.poll(() => page.locator('#audio-status').textContent()).toMatch(/^Spoke \d+ bytes of audio\/wav$/)
    await page.getByRole('button', { name: 'Transcribe the speech above' }).click()
    await expect.poll(() => page.locator('#audio-status').textContent()).toMatch(/^Transcript: .+ \(cost 0\.\d+ EUR\)$/)
  }, 90_000)
})
