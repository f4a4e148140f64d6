import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const root = resolve(import.meta.dirname, '../..')
const dataDir = mkdtempSync(join(tmpdir(), 'mg-playground-'))

const freePort = () =>
  new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => done(port))
    })
  })

/** Runs `npm start` (with extra args) until it is listening; returns its output so far and a stop function. */
async function startPlayground(args: string[] = []) {
  const port = await freePort()
  const child: ChildProcess = spawn('npm', ['start', '--', ...args], {
    cwd: root,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, GATEWAY_SECRET: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`playground did not start:\n${output}`)), 30_000)
    const check = setInterval(() => {
      if (/^(Demo account|New key|Try:)/m.test(output) || /Its key was printed/.test(output)) {
        clearInterval(check)
        clearTimeout(timer)
        done()
      }
    }, 50)
  })
  const stop = () =>
    new Promise<void>((done) => {
      child.once('exit', () => done())
      process.kill(-child.pid!, 'SIGTERM')
    })
  return { url: `http://127.0.0.1:${port}`, output: () => output, stop }
}

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
      expect(await me.json()).toMatchObject({ email: 'demo@example.com', org_name: 'Demo org', credits: { balance: '10', total_credits: '10', total_usage: '0' } })
      const page = await fetch(first.url)
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(await page.text()).toContain('/api/v1/openapi.json')
      expect((await fetch(`${first.url}/api/v1/openapi.json`)).status).toBe(200)
      expect(statSync(join(dataDir, 'secret')).mode & 0o777).toBe(0o600)
    } finally {
      await first.stop()
    }

    const second = await startPlayground()
    try {
      expect(keyIn(second.output())).toBeUndefined()
      expect(second.output()).toContain('--issue-key')
      const me = await fetch(`${second.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
      expect(me.status).toBe(200)
    } finally {
      await second.stop()
    }

    const third = await startPlayground(['--issue-key'])
    try {
      const fresh = keyIn(third.output())
      expect(fresh).toBeDefined()
      expect(fresh).not.toBe(key)
      const me = await (await fetch(`${third.url}/api/v1/me`, { headers: { authorization: `Bearer ${fresh}` } })).json()
      expect(me.email).toBe('demo@example.com')
      expect(me.credits.balance).toBe('10')
    } finally {
      await third.stop()
    }
  }, 120_000)
})
