// npm run test:nuxt-install — model-gateway/nuxt in fresh Nuxt apps, installed as users install it, in both orders
// (Nuxt first, then the packed package; the package first, then Nuxt: its h3 v2 then sits at the top of
// node_modules, next to Nitro's h3 v1), each built and served, and run under `nuxi dev`, on this Node (20) and on
// Node 24. Each app's own route, the gateway's /api/v1/models and the page must answer 200, and no command may say the
// package has no declaration files. It installs Nuxt from the npm registry (about 30 s an app): not part of npm test.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureNode, packPackage } from '../fixtures/nuxt-fixture'

const SECRET = 'install-order-secret-install-order-secret-01'

/** Runs a command to its end; its output, or a thrown error with it. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 600_000): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NUXT_TELEMETRY_DISABLED: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code === 0) done(output)
      else fail(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output.slice(-4000)}`))
    })
  })
}

const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })

/** Starts a server command until its routes answer; checks them; stops it. Its output. */
async function checkServer(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, port: number): Promise<string> {
  const child = spawn(command, args, { cwd, env: { ...process.env, NUXT_TELEMETRY_DISABLED: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const url = `http://127.0.0.1:${port}`
  try {
    const deadline = Date.now() + 120_000
    for (;;) {
      const res = await fetch(`${url}/api/hello`).catch(() => undefined)
      if (res?.status === 200) break
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no answer from /api/hello (${res?.status}):\n${output.slice(-3000)}`)
      await new Promise((r) => setTimeout(r, 500))
    }
    const hello = await (await fetch(`${url}/api/hello`)).json()
    if (hello.ok !== true) throw new Error(`the app's own route answered ${JSON.stringify(hello)}`)
    const models = await fetch(`${url}/api/v1/models`)
    const list = await models.json()
    if (models.status !== 200 || list.object !== 'list' || !list.data.some((m: { id: string }) => m.id === 'demo/echo'))
      throw new Error(`/api/v1/models answered ${models.status} ${JSON.stringify(list).slice(0, 300)}`)
    const page = await fetch(url)
    if (page.status !== 200 || !(await page.text()).includes('install order app')) throw new Error(`the page answered ${page.status}`)
    return output
  } finally {
    child.kill('SIGTERM')
  }
}

/** A fresh app: package.json, nuxt.config.ts with the module, the setup file, its own route and page. */
function writeApp(dir: string) {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'install-order-app', private: true, type: 'module' }))
  writeFileSync(
    join(dir, 'nuxt.config.ts'),
    `export default defineNuxtConfig({ compatibilityDate: '2025-07-15', modules: ['model-gateway/nuxt'], modelGateway: { basePath: '/api/v1', setup: './server/model-gateway.ts' }, devtools: { enabled: false }, telemetry: false })\n`,
  )
  mkdirSync(join(dir, 'server/api'), { recursive: true })
  mkdirSync(join(dir, 'app'), { recursive: true })
  writeFileSync(join(dir, 'server/model-gateway.ts'), `import { demo } from 'model-gateway'\nexport default () => ({ providers: [demo()] })\n`)
  writeFileSync(join(dir, 'server/api/hello.get.ts'), 'export default defineEventHandler(() => ({ ok: true }))\n')
  writeFileSync(join(dir, 'app/app.vue'), '<template><div>install order app</div></template>\n')
}

async function main() {
  const log = (message: string) => process.stdout.write(`[nuxt-install] ${message}\n`)
  const tarball = await packPackage(log)
  const nodes = [
    { name: `Node ${process.versions.node}`, bin: process.execPath },
    { name: 'Node 24', bin: await ensureNode(log) },
  ]
  const results: string[] = []
  let failed = false
  for (const order of ['nuxt first', 'model-gateway first'] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'mg-nuxt-install-'))
    try {
      writeApp(dir)
      const install = (spec: string) => run('npm', ['install', '--no-audit', '--no-fund', spec], dir)
      if (order === 'nuxt first') {
        await install('nuxt@^4')
        await install(tarball)
      } else {
        await install(tarball)
        await install('nuxt@^4')
      }
      const version = (name: string) => JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version
      log(`${order}: nuxt ${version('nuxt')}, top-level h3 ${version('h3')}`)
      for (const node of nodes) {
        const label = `${order}, ${node.name}`
        try {
          const nuxt = join(dir, 'node_modules/nuxt/bin/nuxt.mjs')
          rmSync(join(dir, '.output'), { recursive: true, force: true })
          const built = await run(node.bin, [nuxt, 'build'], dir)
          const port = await freePort()
          const output = await checkServer(
            node.bin,
            ['.output/server/index.mjs'],
            dir,
            { PORT: String(port), HOST: '127.0.0.1', NUXT_MODEL_GATEWAY_SECRET: SECRET },
            port,
          )
          const devPort = await freePort()
          const dev = await checkServer(
            node.bin,
            [nuxt, 'dev', '--port', String(devPort), '--host', '127.0.0.1'],
            dir,
            { NUXT_MODEL_GATEWAY_SECRET: SECRET },
            devPort,
          )
          const said = `${built}\n${output}\n${dev}`
          if (said.includes('has no declaration files')) throw new Error('a command said the package has no declaration files')
          results.push(`ok    ${label}: built, served and under nuxi dev, /api/hello, /api/v1/models and the page answer 200`)
        } catch (error) {
          failed = true
          results.push(`FAIL  ${label}: ${(error as Error).message}`)
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  for (const line of results) console.log(line)
  process.exit(failed ? 1 : 0)
}

void main()
