import { spawn, type ChildProcess } from 'node:child_process'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runContract } from './contract'

const root = resolve(import.meta.dirname, '../..')
const bun = resolve(root, 'node_modules/.bin/bun')

describe('the adapter contract under the real Bun runtime (model-gateway/bun)', () => {
  let child: ChildProcess
  let started: { url: string; key: string; runtime: string }
  beforeAll(async () => {
    // The `bun` npm package ships the runtime; the fixture runs the TypeScript sources with Bun.serve.
    child = spawn(bun, ['test/fixtures/bun-server.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    started = await new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`Bun did not start:\n${output}`)), 30_000)
      child.stderr!.on('data', (chunk) => (output += chunk))
      child.stdout!.on('data', (chunk) => {
        output += chunk
        const line = output.split('\n').find((l) => l.startsWith('{'))
        if (line) {
          clearTimeout(timer)
          done(JSON.parse(line))
        }
      })
      child.once('exit', (code) => fail(new Error(`Bun exited with ${code}:\n${output}`)))
    })
  }, 60_000)
  afterAll(() => {
    child?.kill()
  })

  it('runs in Bun and passes the contract', async () => {
    expect(started.runtime).toMatch(/^1\.\d+\.\d+/)
    await runContract(started.url, started.key)
  })
})
