import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createGateway, type Logger } from '../../src/index'

// The README's "Embedding it in your server" snippets run as written (only the package's name is mapped to this
// checkout's sources, and the port to a free one): the gateway they make serves the demo models, and says nothing
// about missing providers. A gateway without any provider says so at start.

const root = resolve(import.meta.dirname, '../..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const scratch = mkdtempSync(join(root, 'test/.readme-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** The first ```ts block under a README heading. */
function snippetUnder(heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`README has no heading ${heading}`)
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(start))
  if (!block) throw new Error(`no ts block under ${heading}`)
  return block[1]
}

const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })

/** Runs a snippet (the package mapped to the sources, port 3000 to `port`) until `ready` answers; returns its output and a stop. */
async function runSnippet(name: string, code: string, port: number, ready: string) {
  const file = join(scratch, `${name}.mts`)
  const mapped = code
    .replaceAll("from 'model-gateway/node'", `from ${JSON.stringify(join(root, 'adapters/node.ts'))}`)
    .replaceAll("from 'model-gateway/express'", `from ${JSON.stringify(join(root, 'adapters/express.ts'))}`)
    .replaceAll("from 'model-gateway'", `from ${JSON.stringify(join(root, 'src/index.ts'))}`)
    .replaceAll('listen(3000)', `listen(${port}, '127.0.0.1')`)
  writeFileSync(file, mapped)
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: root,
    env: { ...process.env, GATEWAY_SECRET: 'readme-secret-readme-secret-readme-0123' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const deadline = Date.now() + 30_000
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}${ready}`).catch(() => undefined)
    if (up?.ok) break
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${name} did not start: ${output}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return { output: () => output, stop: () => child.kill() }
}

describe('the README’s embedding snippets, as written', () => {
  it('Node http: serves the demo models under /api/v1 next to the app', async () => {
    const port = await freePort()
    const app = await runSnippet('node-http', snippetUnder('### Node http'), port, '/api/v1/models')
    try {
      const models = await (await fetch(`http://127.0.0.1:${port}/api/v1/models`)).json()
      expect(models.data.map((m: { id: string }) => m.id)).toContain('demo/echo')
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('my app')
      expect(app.output()).not.toContain('no provider is configured')
    } finally {
      app.stop()
    }
  })

  it('Express: serves the demo models under /ai/api/v1 and the app’s own route', async () => {
    const port = await freePort()
    const app = await runSnippet('express', snippetUnder('### Express'), port, '/ai/api/v1/models')
    try {
      const models = await (await fetch(`http://127.0.0.1:${port}/ai/api/v1/models`)).json()
      expect(models.data.map((m: { id: string }) => m.id)).toContain('demo/echo')
      expect(await (await fetch(`http://127.0.0.1:${port}/hello`)).text()).toBe('my app')
      expect(app.output()).not.toContain('no provider is configured')
    } finally {
      app.stop()
    }
  })

  it('a gateway without any provider says so at start, once', async () => {
    const warnings: string[] = []
    const logger: Logger = { debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} }
    const gateway = createGateway({ secret: 'readme-secret-readme-secret-readme-0123', logger })
    await gateway.close()
    expect(warnings.filter((w) => w.includes('no provider is configured'))).toHaveLength(1)
    expect(warnings.find((w) => w.includes('no provider'))).toContain('demo()')
  })
})
