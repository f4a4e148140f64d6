import { createServer } from 'node:http'
import { resolve } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { toNodeHandler } from '../adapters/node'
import { createGateway } from '../src/index'
import { landingPage } from './page'
import { playgroundProviders } from './providers'
import { ensureDemoAccount, loadSecret } from './setup'

// The playground: the gateway inside a plain Node http server, records in .data/, a demo account on first start.
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
const dataDir = resolve(process.env.DATA_DIR ?? '.data')

const providers = playgroundProviders(process.env)
const gateway = createGateway({
  storage: createStorage({ driver: fsDriver({ base: resolve(dataDir, 'storage') }) }),
  secret: loadSecret(dataDir),
  providers: providers.list,
})
const { basePath } = gateway.context.options
const demo = await ensureDemoAccount(gateway, { issueKey: process.argv.includes('--issue-key') })

const handleApi = toNodeHandler(gateway)
const server = createServer((req, res) => {
  if (req.url === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(req.method === 'GET' ? landingPage(basePath) : undefined)
    return
  }
  handleApi(req, res)
})

server.listen(port, host, () => {
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  console.log(`model-gateway playground on ${origin}  (API: ${origin}${basePath}, data: ${dataDir})`)
  console.log(`Providers: ${providers.summary}`)
  if (demo.key) {
    console.log(`\n${demo.created ? 'Demo account created (demo@example.com, 10 EUR of credits).' : 'New key for the demo account.'} Its API key, shown only now:\n\n  ${demo.key}\n`)
    console.log(`Try:  curl -s ${origin}${basePath}/me -H "Authorization: Bearer ${demo.key}"`)
    console.log(`      curl -s ${origin}${basePath}/chat/completions -H "Authorization: Bearer ${demo.key}" -H "Content-Type: application/json" -d '{"model":"demo/echo","messages":[{"role":"user","content":"Hello!"}]}'\n`)
  } else {
    console.log('Demo account: demo@example.com. Its key was printed on first start; `npm start -- --issue-key` prints a new one.')
  }
})

const stop = () => server.close(() => void gateway.close().then(() => process.exit(0)))
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
