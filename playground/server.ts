import type { IncomingMessage, ServerResponse } from 'node:http'
import { resolve } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { createLimitedServer, toNodeHandler } from '../adapters/node'
import { createGateway } from '../src/index'
import { exampleAppPage, exampleCallbackPage, signInPage } from './page'
import { playgroundPage } from './ui'
import { playgroundProviders } from './providers'
import { createSessions, safeReturnPath } from './session'
import { DEMO_EMAIL, ensureDemoAccount, loadSecret } from './setup'

// The playground: the gateway inside a plain Node http server, records in .data/, a demo account on first start,
// a demo sign-in (the host's part of the PKCE flow) and an example app that gets a key through that flow.
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
const dataDir = resolve(process.env.DATA_DIR ?? '.data')
const secret = loadSecret(dataDir)
const sessions = createSessions(secret)

const providers = playgroundProviders(process.env)
const gateway = createGateway({
  storage: createStorage({ driver: fsDriver({ base: resolve(dataDir, 'storage') }) }),
  secret,
  providers: providers.list,
  // Behind a proxy, PUBLIC_URL (https://playground.example) is the origin of links and sign-in return addresses.
  ...(process.env.PUBLIC_URL ? { publicUrl: process.env.PUBLIC_URL } : {}),
  auth: {
    resolveUser: (event) => sessions.userOf(event.req.headers.get('cookie')),
    signInUrl: '/sign-in',
  },
})
const { basePath, publicUrl } = gateway.context.options
const demo = await ensureDemoAccount(gateway, { issueKey: process.argv.includes('--issue-key') })

const html = (res: ServerResponse, body: string, status = 200) =>
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body)

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > 64 * 1024) break
  }
  return new URLSearchParams(text)
}

const handleApi = toNodeHandler(gateway)
// The same limits against slow clients as serve() (adapters/node.ts).
const server = createLimitedServer(async (req, res) => {
  const url = new URL(req.url ?? '/', publicUrl ?? `http://${req.headers.host ?? 'localhost'}`)
  const page = `${req.method} ${url.pathname}`
  if (page === 'GET /') return html(res, playgroundPage(basePath))
  if (page === 'GET /example-app') return html(res, exampleAppPage(basePath))
  if (page === 'GET /example-app/callback') return html(res, exampleCallbackPage(basePath))
  if (page === 'GET /sign-in') return html(res, signInPage(safeReturnPath(url.searchParams.get('return_to'), url.origin), DEMO_EMAIL))
  if (page === 'POST /sign-in') {
    const user = await gateway.admin.findUserByEmail(DEMO_EMAIL)
    const returnTo = safeReturnPath((await readForm(req)).get('return_to'), url.origin)
    return res.writeHead(303, { location: returnTo, 'set-cookie': sessions.cookieFor(user!.id) }).end()
  }
  handleApi(req, res)
})

server.listen(port, host, () => {
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  console.log(`model-gateway playground on ${origin}  (API: ${origin}${basePath}, data: ${dataDir})`)
  console.log(`Providers: ${providers.summary}`)
  console.log(`Example app (PKCE key issuance): ${origin}/example-app`)
  if (demo.key) {
    console.log(
      `\n${demo.created ? 'Demo account created (demo@example.com, 10 EUR of credits).' : 'New key for the demo account.'} Its API key, shown only now:\n\n  ${demo.key}\n`,
    )
    console.log(`Try:  curl -s ${origin}${basePath}/me -H "Authorization: Bearer ${demo.key}"`)
    console.log(
      `      curl -s ${origin}${basePath}/chat/completions -H "Authorization: Bearer ${demo.key}" -H "Content-Type: application/json" -d '{"model":"demo/echo","messages":[{"role":"user","content":"Hello!"}]}'\n`,
    )
  } else {
    console.log('Demo account: demo@example.com. Its key was printed on first start; `npm start -- --issue-key` prints a new one.')
  }
})

// Stop listening, let the gateway drain what is in flight (docs/operations.md), then cut what is left.
const stop = () => {
  server.close()
  server.closeIdleConnections()
  void gateway.close().then(() => {
    server.closeAllConnections()
    process.exit(0)
  })
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
