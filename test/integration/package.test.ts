import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
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

// A gateway over files (the fs driver), whose changes take the folder's lock (proper-lockfile, loaded on first use):
// two grants at once, both counted.
const filesProgram = (load: string) => `${load}
async function main() {
  const base = process.argv[2]
  const gateway = createGateway({ storage: createStorage({ driver: fsDriver({ base }) }), secret: 'scratch-secret-scratch-secret-scratch', logger: false })
  const user = await gateway.admin.createUser({ email: 'files@example.com', orgName: 'Files' })
  await Promise.all([gateway.admin.addCredits(user.org_id, '1.5'), gateway.admin.addCredits(user.org_id, '2')])
  console.log(JSON.stringify({ credits: await gateway.admin.getCredits(user.org_id), locks: readdirSync(base).filter((name) => name.startsWith('.')) }))
  await gateway.close()
}
main().catch((error) => { console.error(error); process.exit(1) })
`

// The AI SDK provider with a stub client, where neither \`ai\` nor \`@ai-sdk/provider\` is installed: it imports
// nothing at run time (docs/first-party.md#the-ai-sdk-provider).
const aiSdkProgram = (load: string) => `${load}
const client = {
  chat: { completions: { create: async (body) => ({ id: 'gen-1', model: body.model, choices: [{ message: { content: 'Hi ' + body.messages[0].content }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, cost: 0.25 } }) } },
  embeddings: { create: async () => ({ data: [] }) },
}
async function main() {
  const result = await createGatewayProvider({ client })('a/b').doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'there' }] }] })
  console.log(JSON.stringify({ content: result.content, finishReason: result.finishReason, cost: result.providerMetadata.modelGateway.cost }))
}
main().catch((error) => { console.error(error); process.exit(1) })
`

// A consumer of every entry point's types. The @ts-expect-error lines fail to compile if a module's types are `any`.
const consumer = `import { createGateway, GatewayError, type Gateway, type Credits } from 'model-gateway'
import { serve, toNodeHandler } from 'model-gateway/node'
import { bodyLimitOf, toExpressHandler } from 'model-gateway/express'
import { serve as serveOnBun, toBunFetch } from 'model-gateway/bun'
import { serve as serveOnDeno, toDenoHandler } from 'model-gateway/deno'
import nuxtModule, { type ModelGatewayModuleOptions } from 'model-gateway/nuxt'
import { createGatewayProvider, type OpenAIShapedClient } from 'model-gateway/ai-sdk'
const gateway: Gateway = createGateway({ basePath: '/ai', publicCatalogue: false })
const handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void = toNodeHandler(gateway)
const credits: Promise<Credits> = gateway.admin.getCredits('x')
const error = new GatewayError(402, 'no credits')
const limit: number = bodyLimitOf(gateway)
const middleware = toExpressHandler(gateway)
const bunFetch: (request: Request) => Promise<Response> = toBunFetch(gateway)
const denoHandler: (request: Request) => Promise<Response> = toDenoHandler(gateway)
const options: ModelGatewayModuleOptions = { basePath: '/api/v1', nitroStorage: 'gateway' }
declare const client: OpenAIShapedClient
const chatModel: { specificationVersion: 'v3'; modelId: string } = createGatewayProvider({ client })('openai/gpt-4o')
const oldModel: { specificationVersion: 'v2' } = createGatewayProvider({ client, specificationVersion: 'v2' }).textEmbeddingModel('openai/text-embedding-3-small')
// @ts-expect-error a string is not a client
createGatewayProvider({ client: 'not a client' })
// @ts-expect-error a string is not a Gateway
toExpressHandler('not a gateway')
// @ts-expect-error a string is not a Gateway
toBunFetch('not a gateway')
// @ts-expect-error a string is not a Gateway
toDenoHandler('not a gateway')
// @ts-expect-error basePath is a string
const wrong: ModelGatewayModuleOptions = { basePath: 42 }
export { handler, credits, error, serve, limit, middleware, bunFetch, serveOnBun, denoHandler, serveOnDeno, nuxtModule, options, wrong, chatModel, oldModel }
`

// The entry points in package.json's exports, and the declaration file each of arethetypeswrong's resolutions must find
// (node10 reads `types` and typesVersions; node16 and bundler read exports' types conditions).
const entries: [subpath: string, file: string][] = [
  ['.', 'index'],
  ['./node', 'adapters/node'],
  ['./express', 'adapters/express'],
  ['./bun', 'adapters/bun'],
  ['./deno', 'adapters/deno'],
  ['./edge', 'edge'],
  ['./workers', 'adapters/workers'],
  ['./nuxt', 'adapters/nuxt'],
  ['./ai-sdk', 'ai-sdk'],
]

// What a TypeScript user may set, and the consumer file for it (.mts/.cts: an ES module or a CommonJS one under node16
// and nodenext, whatever the package.json around it says).
const resolutions: [name: string, compilerOptions: Record<string, unknown>, file: string][] = [
  ['node (node10), CommonJS', { module: 'commonjs', moduleResolution: 'node' }, 'consumer.ts'],
  ['node16, ES module', { module: 'node16', moduleResolution: 'node16' }, 'consumer.mts'],
  ['node16, CommonJS', { module: 'node16', moduleResolution: 'node16' }, 'consumer.cts'],
  ['nodenext, ES module', { module: 'nodenext', moduleResolution: 'nodenext' }, 'consumer.mts'],
  ['nodenext, CommonJS', { module: 'nodenext', moduleResolution: 'nodenext' }, 'consumer.cts'],
  ['bundler', { module: 'esnext', moduleResolution: 'bundler' }, 'consumer.ts'],
]

describe('the built package', () => {
  let scratch: string
  let tarball: string
  let installed: string
  let buildOutput = ''
  beforeAll(async () => {
    const built = await run('npm', ['run', 'build'], { cwd: root })
    buildOutput = `${built.stdout}\n${built.stderr}`
    // The package as published: npm pack's tarball (package.json's files), unpacked into a scratch project outside
    // the checkout, where its dependencies are links to this checkout's (and the peers its types name).
    scratch = mkdtempSync(join(tmpdir(), 'mg-scratch-'))
    const [packed] = JSON.parse((await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: root })).stdout)
    tarball = join(scratch, packed.filename)
    installed = join(scratch, 'node_modules', 'model-gateway')
    mkdirSync(installed, { recursive: true })
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    for (const name of [...Object.keys(manifest.dependencies), '@nuxt/schema', '@types/node', '@ai-sdk/provider']) {
      mkdirSync(dirname(join(scratch, 'node_modules', name)), { recursive: true })
      symlinkSync(join(root, 'node_modules', name), join(scratch, 'node_modules', name), 'dir')
    }
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }))
    writeFileSync(join(scratch, 'esm.mjs'), program(`import { createGateway } from 'model-gateway'\nimport { serve } from 'model-gateway/node'`))
    writeFileSync(join(scratch, 'cjs.cjs'), program(`const { createGateway } = require('model-gateway')\nconst { serve } = require('model-gateway/node')`))
    writeFileSync(join(scratch, 'esm-ai-sdk.mjs'), aiSdkProgram(`import { createGatewayProvider } from 'model-gateway/ai-sdk'`))
    writeFileSync(join(scratch, 'cjs-ai-sdk.cjs'), aiSdkProgram(`const { createGatewayProvider } = require('model-gateway/ai-sdk')`))
    writeFileSync(
      join(scratch, 'esm-files.mjs'),
      filesProgram(
        `import { readdirSync } from 'node:fs'\nimport { createStorage } from 'unstorage'\nimport fsDriver from 'unstorage/drivers/fs'\nimport { createGateway } from 'model-gateway'`,
      ),
    )
    writeFileSync(
      join(scratch, 'cjs-files.cjs'),
      filesProgram(
        `const { readdirSync } = require('node:fs')\nconst { createStorage } = require('unstorage')\nconst fsDriver = require('unstorage/drivers/fs')\nconst { createGateway } = require('model-gateway')`,
      ),
    )
  }, 180_000)
  // (scratch is unset when the build itself failed: that failure is the one to read.)
  afterAll(() => scratch && rmSync(scratch, { recursive: true, force: true }))

  it('packs only dist and bin besides package.json, README and LICENSE', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball])
    const tops = new Set(
      stdout
        .trim()
        .split('\n')
        .map((path) => path.replace(/^package\//, '').split('/')[0]),
    )
    expect([...tops].filter((top) => !/^(dist|bin|package\.json|README\.md|LICENSE)$/.test(top))).toEqual([])
    expect(tops).toContain('dist')
    // The package says MIT: the license's text goes with it.
    expect(tops).toContain('LICENSE')
  })

  it('builds without a declaration naming a type the package does not export', () => {
    expect(buildOutput).toContain('Total dist size') // the build's own output was read (its success line is not said under a test)
    expect(buildOutput).not.toMatch(/private shared type exports with no public re-export/)
  })

  it('has ESM, CommonJS and type declarations for every entry', () => {
    for (const file of [
      'index.mjs',
      'index.cjs',
      'index.d.mts',
      'index.d.cts',
      'adapters/node.mjs',
      'adapters/node.cjs',
      'adapters/node.d.mts',
      'adapters/express.mjs',
      'adapters/express.cjs',
      'adapters/bun.mjs',
      'adapters/deno.mjs',
      'adapters/deno.d.mts',
      'edge.mjs',
      'edge.cjs',
      'adapters/workers.mjs',
      'ai-sdk.mjs',
      'ai-sdk.cjs',
      'ai-sdk.d.mts',
      'ai-sdk.d.cts',
      'ai-sdk.d.ts',
      'cli.mjs',
    ]) {
      expect(existsSync(join(installed, 'dist', file)), file).toBe(true)
    }
  })

  it('ships the Nuxt module’s server runtime, as ES modules with declarations, where the module resolves it', () => {
    for (const name of ['plugin', 'handler', 'gateway', 'web-request', 'cloudflare', 'platform', 'random']) {
      for (const file of [`${name}.js`, `${name}.d.ts`]) expect(existsSync(join(installed, 'dist/adapters/nuxt/runtime', file)), file).toBe(true)
    }
    expect(readFileSync(join(installed, 'dist/adapters/nuxt.mjs'), 'utf8')).toContain('"./nuxt/runtime"')
  })

  for (const [name, file] of [
    ['ESM import', 'esm.mjs'],
    ['CommonJS require', 'cjs.cjs'],
  ]) {
    it(`serves /me from a scratch project by ${name}`, async () => {
      const { stdout } = await run(process.execPath, [file], { cwd: scratch })
      const out = JSON.parse(stdout.trim())
      expect(out.status).toBe(200)
      expect(out.body).toMatchObject({
        user_id: out.userId,
        email: 'scratch@example.com',
        org_name: 'Scratch',
        plan: 'free',
        credits: { balance: '1.5', total_credits: '1.5', total_usage: '0' },
      })
    }, 60_000)
  }

  for (const [name, file] of [
    ['ESM import', 'esm-files.mjs'],
    ['CommonJS require', 'cjs-files.cjs'],
  ]) {
    it(`keeps records in files, taking the folder's lock, by ${name}`, async () => {
      const base = join(scratch, `files-${file}`)
      const { stdout } = await run(process.execPath, [file, base], { cwd: scratch })
      expect(JSON.parse(stdout.trim())).toEqual({ credits: { balance: '3.5', total_credits: '3.5', total_usage: '0' }, locks: ['.model-gateway-locks'] })
    }, 60_000)
  }

  for (const [name, file] of [
    ['ESM import', 'esm-ai-sdk.mjs'],
    ['CommonJS require', 'cjs-ai-sdk.cjs'],
  ]) {
    it(`runs the AI SDK provider without ai or @ai-sdk/provider at run time, by ${name}`, async () => {
      // Linked for the consumers' types only: the program runs with it out of reach.
      rmSync(join(scratch, 'node_modules/@ai-sdk/provider'), { force: true })
      try {
        const { stdout } = await run(process.execPath, [file], { cwd: scratch })
        expect(JSON.parse(stdout.trim())).toEqual({ content: [{ type: 'text', text: 'Hi there' }], finishReason: { unified: 'stop', raw: 'stop' }, cost: 0.25 })
      } finally {
        symlinkSync(join(root, 'node_modules/@ai-sdk/provider'), join(scratch, 'node_modules/@ai-sdk/provider'), 'dir')
      }
      for (const built of ['ai-sdk.mjs', 'ai-sdk.cjs'])
        expect(readFileSync(join(installed, 'dist', built), 'utf8')).not.toMatch(/\bfrom\s*['"]|\brequire\(|\bimport\(/)
    }, 60_000)
  }

  it('runs the CLI from its bin', async () => {
    const { stdout } = await run(process.execPath, [join(installed, 'bin/model-gateway.mjs'), '--version'], { cwd: scratch })
    expect(stdout.trim()).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version)
  })

  // The checks published packages get, on the tarball itself: publint (package.json's fields against the packed files,
  // strict: its warnings fail too) and arethetypeswrong (each entry's types under node10, node16 CJS/ESM and bundler
  // against the JavaScript they describe). Neither needs the network.
  it('passes publint, strict, with no message', async () => {
    const data = readFileSync(tarball)
    const { messages, pkg } = await publint({ pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) }, strict: true })
    expect(messages.map((message) => `${message.type} ${message.code}: ${formatMessage(message, pkg, { color: false })}`)).toEqual([])
  })

  it('passes arethetypeswrong for every entry point, with the types each resolution must find', async () => {
    const result = await checkPackage(createPackageFromTarballData(new Uint8Array(readFileSync(tarball))), { entrypoints: entries.map(([subpath]) => subpath) })
    if (result.types === false) throw new Error('arethetypeswrong found no types in the package')
    expect(result.types).toEqual({ kind: 'included' })
    expect(result.problems).toEqual([])
    const found = Object.fromEntries(
      Object.entries(result.entrypoints).map(([subpath, entry]) => [
        subpath,
        Object.fromEntries(Object.entries(entry.resolutions).map(([kind, resolution]) => [kind, resolution.resolution?.fileName])),
      ]),
    )
    const dist = '/node_modules/model-gateway/dist'
    expect(found).toEqual(
      Object.fromEntries(
        entries.map(([subpath, file]) => [
          subpath,
          { node10: `${dist}/${file}.d.ts`, 'node16-cjs': `${dist}/${file}.d.cts`, 'node16-esm': `${dist}/${file}.d.mts`, bundler: `${dist}/${file}.d.mts` },
        ]),
      ),
    )
  }, 30_000)

  // Issue 17: without typesVersions, moduleResolution node (node10) found no types for the subpaths (TS2307).
  for (const [name, options, file] of resolutions) {
    it(`type-checks a consumer of every entry point under moduleResolution ${name}`, async () => {
      const dir = join(scratch, `types-${name.replace(/\W+/g, '-')}`)
      mkdirSync(dir)
      symlinkSync(join(scratch, 'node_modules'), join(dir, 'node_modules'), 'dir')
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
      writeFileSync(join(dir, file), consumer)
      const compilerOptions = { ...options, target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, esModuleInterop: true, types: ['node'] }
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [file] }))
      const checked = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir, '--pretty', 'false'], { cwd: dir }).catch(
        (error) => error as { stdout: string },
      )
      expect(checked.stdout.trim()).toBe('')
    }, 60_000)
  }
})
