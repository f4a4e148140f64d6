// Where the gateway's promises per request are made (bench/README.md#issue-34s-targets): a whole chat request served
// over HTTP by a gateway in this process (memory storage, the bench's fake upstream in a child), its promises counted
// by v8.promiseHooks with the first frame under src/ (or a package) that made each, one request at a time after a
// warm-up. Run: npx tsx bench/promise-sites.ts [requests] [stream]
import { request } from 'node:http'
import { promiseHooks } from 'node:v8'
import { serve } from '../adapters/node'
import { createGateway, openaiCompatible } from '../src/index'
import { startChild, stopChildren } from './children'

const requests = Number(process.argv[2] ?? 50)
const stream = process.argv[3] === 'stream'
const upstream = await startChild('upstream', 'upstream-process.ts', {})
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const gateway = createGateway({
  logger: false,
  secret: 'bench-secret-bench-secret-bench-secret-0123',
  providers: [
    openaiCompatible({
      slug: 'fake',
      name: 'Fake',
      baseURL: (upstream.info as { url: string }).url,
      apiKey: 'x',
      models: [{ id: 'fake/bench', upstreamId: 'bench', pricing }],
    }),
  ],
})
const user = await gateway.admin.createUser({ email: 'bench@example.com' })
await gateway.admin.addCredits(user.org_id, '1000000')
const { key } = await gateway.admin.issueKey({ userId: user.id })
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
const body = JSON.stringify({ model: 'fake/bench', messages: [{ role: 'user', content: 'hello benchmark' }], ...(stream ? { stream: true } : {}) })
const one = () =>
  new Promise<void>((resolve, reject) => {
    const req = request(
      `${server.url}/api/v1/chat/completions`,
      { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume()
        res.on('end', () => resolve())
      },
    )
    req.on('error', reject)
    req.end(body)
  })
for (let i = 0; i < 50; i++) await one()
const sites = new Map<string, number>()
let total = 0
const stop = promiseHooks.onInit(() => {
  total++
  const frames = (new Error().stack ?? '').split('\n').slice(2)
  const frame = frames.find((f) => f.includes('/src/') || f.includes('node_modules')) ?? frames[0] ?? '?'
  const site = frame
    .replace(/^\s*at\s+/, '')
    .replace(/\(?\/work\/main\//, '')
    .replace(/:\d+\)?$/, '')
  sites.set(site, (sites.get(site) ?? 0) + 1)
})
for (let i = 0; i < requests; i++) await one()
stop()
console.log(`${(total / requests).toFixed(1)} promises per ${stream ? 'streamed' : 'whole'} request (the client's included)`)
for (const [site, n] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(n / requests).toFixed(1).padStart(6)}  ${site}`)
await server.close()
await gateway.close()
await stopChildren()
