import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')

// The same program in both module systems: a gateway on the built package, a key, and GET /me over HTTP.
const program = (load: string) => `${load}
async function main() {
  const gateway = createGateway({ secret: 'scratch-secret-scratch-secret-scratch', logger: false })
  const user = await gateway.admin.createUser({ email: 'scratch@example.com', orgName: 'Scratch' })
  await gateway.admin.addCredits(user.org_id, '1.5')
  const { key } = await gateway.admin.issueKey({ userId: user.id })
  const server = await serve(gateway, { port: 0 })
  const res = await fetch(server.url + '/api/v1/me', { headers: { authorization: 'Bearer ' + key } })
  console.log(JSON.stringify({ status: res.status, body: await res.json(), userId: user.id }))
  await server.close()
}
main().catch((error) => { console.error(error); process.exit(1) })
`

describe('the built package', () => {
  let scratch: string
  beforeAll(async () => {
    await run('npm', ['run', 'build'], { cwd: root })
    scratch = mkdtempSync(join(tmpdir(), 'mg-scratch-'))
    mkdirSync(join(scratch, 'node_modules'))
    symlinkSync(root, join(scratch, 'node_modules', 'model-gateway'), 'dir')
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }))
    writeFileSync(join(scratch, 'esm.mjs'), program(`import { createGateway } from 'model-gateway'\nimport { serve } from 'model-gateway/node'`))
    writeFileSync(join(scratch, 'cjs.cjs'), program(`const { createGateway } = require('model-gateway')\nconst { serve } = require('model-gateway/node')`))
  }, 180_000)
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  it('has ESM, CommonJS and type declarations for every entry', () => {
    for (const file of ['index.mjs', 'index.cjs', 'index.d.mts', 'index.d.cts', 'adapters/node.mjs', 'adapters/node.cjs', 'adapters/node.d.mts', 'adapters/express.mjs', 'adapters/express.cjs', 'adapters/bun.mjs', 'cli.mjs']) {
      expect(existsSync(join(root, 'dist', file)), file).toBe(true)
    }
  })

  for (const [name, file] of [['ESM import', 'esm.mjs'], ['CommonJS require', 'cjs.cjs']]) {
    it(`serves /me from a scratch project by ${name}`, async () => {
      const { stdout } = await run(process.execPath, [file], { cwd: scratch })
      const out = JSON.parse(stdout.trim())
      expect(out.status).toBe(200)
      expect(out.body).toMatchObject({ user_id: out.userId, email: 'scratch@example.com', org_name: 'Scratch', plan: 'free', credits: { balance: '1.5', total_credits: '1.5', total_usage: '0' } })
    }, 60_000)
  }

  it('runs the CLI from its bin', async () => {
    const { stdout } = await run(process.execPath, [join(root, 'bin/model-gateway.mjs'), '--version'], { cwd: scratch })
    expect(stdout.trim()).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version)
  })

  it('type-checks a consumer written against the published types', async () => {
    writeFileSync(join(scratch, 'consumer.ts'), `import { createGateway, GatewayError, type Gateway, type Credits } from 'model-gateway'
import { serve, toNodeHandler } from 'model-gateway/node'
const gateway: Gateway = createGateway({ basePath: '/ai', publicCatalogue: false })
const handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void = toNodeHandler(gateway)
const credits: Promise<Credits> = gateway.admin.getCredits('x')
const error = new GatewayError(402, 'no credits')
export { handler, credits, error, serve }
`)
    writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')] }, files: ['consumer.ts'] }))
    await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', scratch], { cwd: scratch })
  }, 60_000)
})
