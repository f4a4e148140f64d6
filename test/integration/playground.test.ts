import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startFakeOpenAI } from '../fakes/openai'
import { decimalText, readSse, units } from '../helpers/sse'
import { startPlayground as start } from '../helpers/playground'

const dataDir = mkdtempSync(join(tmpdir(), 'mg-playground-'))
const startPlayground = (args: string[] = [], env: Record<string, string> = {}) => start(dataDir, args, env)

const keyIn = (text: string) => /sk-service-v1-[0-9a-f]{64}/.exec(text)?.[0]

describe('npm start (the playground)', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('creates a demo account on first start, prints its key once, and keeps it across restarts', async () => {
    const first = await startPlayground()
    let key: string | undefined
    try {
      key = keyIn(first.output())
      expect(key).toBeDefined()
      const me = await fetch(`${first.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
      expect(me.status).toBe(200)
      expect(await me.json()).toMatchObject({
        email: 'demo@example.com',
        org_name: 'Demo org',
        credits: { balance: '10', total_credits: '10', total_usage: '0' },
      })
      const page = await fetch(first.url)
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
      const html = await page.text()
      expect(html).toContain('/api/v1/openapi.json')
      // The key's limits and rules the page shows come from GET /key (docs/policies.md#built-in-rules).
      expect(html).toContain('<span id="key-limits"')
      expect(html).toContain("fetch(api + '/key', authed())")
      const own = await (await fetch(`${first.url}/api/v1/key`, { headers: { authorization: `Bearer ${key}` } })).json()
      expect(own.data).toMatchObject({ limit: null, allowed_models: null, allowed_providers: null, max_price: null, enforce_zdr: false })
      expect(own.data.rate_limit).toMatchObject({ requests: -1, interval: 'none' })
      expect((await fetch(`${first.url}/api/v1/openapi.json`)).status).toBe(200)
      expect(statSync(join(dataDir, 'secret')).mode & 0o777).toBe(0o600)

      // With no provider keys, chat works offline through demo/echo, whole and streamed, and is billed.
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
      const whole = await fetch(`${first.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello playground' }] }),
      })
      expect(whole.status).toBe(200)
      const completion = await whole.json()
      expect(completion.choices[0].message.content).toBe('Echo: Hello playground')
      expect(completion.usage.cost).toBeGreaterThan(0)
      const streamed = await fetch(`${first.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'demo/echo', stream: true, messages: [{ role: 'user', content: 'Stream me' }] }),
      })
      const { events } = await readSse(streamed)
      expect(events.at(-1)).toBe('[DONE]')
      expect(
        events
          .slice(0, -1)
          .map((e: any) => e.choices[0]?.delta?.content ?? '')
          .join(''),
      ).toBe('Echo: Stream me')
      const usage = events.at(-2).usage
      const credits = (await (await fetch(`${first.url}/api/v1/me`, { headers })).json()).credits
      expect(credits.total_usage).toBe(decimalText(units(String(completion.usage.cost_eur)) + units(String(usage.cost_eur))))
      expect(first.output()).toContain('Providers: demo (offline, models demo/echo, demo/embed, demo/speech, demo/transcribe)')

      // The demo sign-in returns only to a path of this site: not to a path a browser reads as another host.
      const signIn = async (returnTo: string) =>
        (
          await fetch(`${first.url}/sign-in`, {
            method: 'POST',
            redirect: 'manual',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ return_to: returnTo }),
          })
        ).headers.get('location')
      expect(await signIn(`${first.url}/example-app?x=1`)).toBe('/example-app?x=1')
      expect(await signIn(`${first.url}//evil.example/x`)).toBe('/')
      expect(await signIn('/%2F%2Fevil.example/x')).toBe('/')
    } finally {
      await first.stop()
    }

    const second = await startPlayground([], { PUBLIC_URL: 'https://playground.example' })
    try {
      expect(keyIn(second.output())).toBeUndefined()
      expect(second.output()).toContain('--issue-key')
      const me = await fetch(`${second.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
      expect(me.status).toBe(200)
      // PUBLIC_URL: links and sign-in return addresses are on the public address, not the one the request came to.
      const feed = await (await fetch(`${second.url}/api/v1/models?use_rss=true`)).text()
      expect(feed).toContain('<link>https://playground.example/api/v1/models?use_rss=true</link>')
      expect(feed).not.toContain('127.0.0.1')
      const begin = await fetch(`${second.url}/api/v1/auth?callback_url=${encodeURIComponent('http://localhost:9/cb')}&code_challenge=${'a'.repeat(43)}`, {
        redirect: 'manual',
      })
      expect(new URL(begin.headers.get('location')!, second.url).searchParams.get('return_to')).toMatch(/^https:\/\/playground\.example\/api\/v1\/auth\?/)
      const signedIn = await fetch(`${second.url}/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ return_to: 'https://playground.example/example-app' }),
      })
      expect(signedIn.headers.get('location')).toBe('/example-app')
    } finally {
      await second.stop()
    }

    const upstream = await startFakeOpenAI({ apiKey: 'sk-playground-openai' })
    const third = await startPlayground(['--issue-key'], { OPENAI_API_KEY: 'sk-playground-openai', OPENAI_BASE_URL: upstream.url })
    try {
      const fresh = keyIn(third.output())
      expect(fresh).toBeDefined()
      expect(fresh).not.toBe(key)
      const me = await (await fetch(`${third.url}/api/v1/me`, { headers: { authorization: `Bearer ${fresh}` } })).json()
      expect(me.email).toBe('demo@example.com')
      // With OPENAI_API_KEY and OPENAI_BASE_URL set, OpenAI's models are served through that upstream.
      expect(third.output()).toContain(`openai at ${upstream.url}`)
      const res = await fetch(`${third.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fresh}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-6-luna', messages: [{ role: 'user', content: 'real provider' }] }),
      })
      expect((await res.json()).choices[0].message.content).toBe('Hello from gpt-6-luna: real provider')
      expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-playground-openai')
    } finally {
      await third.stop()
      await upstream.close()
    }
  }, 120_000)
})
