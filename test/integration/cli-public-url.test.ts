import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openGateway } from '../../src/cli/config'

// `model-gateway serve` takes publicUrl from PUBLIC_URL (the config file's own publicUrl wins); other commands build no links.
describe('the CLI and PUBLIC_URL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-cli-public-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const open = (command: 'serve' | 'models', env: NodeJS.ProcessEnv) =>
    openGateway({ command, cwd: dir, env: { GATEWAY_SECRET: 'x'.repeat(32), ...env }, logger: false, noStorage: true })

  it('serve passes PUBLIC_URL to the gateway as publicUrl', async () => {
    const cli = await open('serve', { PUBLIC_URL: 'https://gateway.example' })
    try {
      expect(cli.gateway.context.options.publicUrl).toBe('https://gateway.example')
      const feed = await (await cli.gateway.fetch(new Request('http://evil.example/api/v1/models?use_rss=true'))).text()
      expect(feed).toContain('<link>https://gateway.example/api/v1/models?use_rss=true</link>')
      expect(feed).not.toContain('evil.example')
    } finally {
      await cli.close()
    }
  })

  it('without PUBLIC_URL, or for another command, nothing is pinned; a malformed PUBLIC_URL stops serve', async () => {
    for (const [command, env] of [
      ['serve', {}],
      ['serve', { PUBLIC_URL: '' }],
      ['models', { PUBLIC_URL: 'https://gateway.example' }],
    ] as const) {
      const cli = await open(command, env)
      expect(cli.gateway.context.options.publicUrl).toBeUndefined()
      await cli.close()
    }
    await expect(open('serve', { PUBLIC_URL: 'gateway.example/app' })).rejects.toThrow(/publicUrl/)
  })
})
