import type { IncomingMessage, ServerResponse } from 'node:http'
import { resolve } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { clientFor, createLimitedServer, toNodeHandler } from '../adapters/node'
import { createGateway, GatewayError } from '../src/index'
import { exampleAppPage, exampleCallbackPage, signInPage } from './page'
import { playgroundPage } from './ui'
import { playgroundProviders } from './providers'
import { createSessions, createTeamSessions, safeReturnPath } from './session'
import { DEMO_EMAIL, ensureDemoAccount, loadSecret } from './setup'
import { ensureTeam, isSameSite, TEAM_MEMBERS, teamMember, teamSession, teamSpend } from './team'
import { teamPage } from './team-page'

// The playground: the gateway inside a plain Node http server, records in .data/, a demo account on first start,
// a demo sign-in (the host's part of the PKCE flow) and an example app that gets a key through that flow, and the
// team demo (playground/team.ts): two host users signed in by a cookie of their own, who chat with no key.
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
const dataDir = resolve(process.env.DATA_DIR ?? '.data')
const secret = loadSecret(dataDir)
const sessions = createSessions(secret)
const teamSessions = createTeamSessions(secret)

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
  // The team demo's users: the host's session principals (docs/first-party.md#session-principals).
  session: teamSession((cookie) => teamSessions.hostIdOf(cookie)),
})
const { basePath, publicUrl } = gateway.context.options
const demo = await ensureDemoAccount(gateway, { issueKey: process.argv.includes('--issue-key') })
const team = await ensureTeam(gateway)

const html = (res: ServerResponse, body: string, status = 200) =>
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body)

const json = (res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}) =>
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body))
const jsonError = (res: ServerResponse, error: GatewayError) => json(res, error.toJSON(), error.status, error.headers ?? {})

async function readText(req: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > 64 * 1024) break
  }
  return text
}
const readForm = async (req: IncomingMessage) => new URLSearchParams(await readText(req))

// The team demo's routes (playground/team.ts). They are the host's own, so they refuse cross-site posts themselves.
async function handleTeam(req: IncomingMessage, res: ServerResponse, page: string, origin: string): Promise<void> {
  const member = teamMember(teamSessions.hostIdOf(req.headers.cookie))
  if (page === 'GET /team') return void html(res, teamPage(basePath, member, TEAM_MEMBERS))
  if (req.method === 'POST' && !isSameSite(req, origin)) {
    return void jsonError(res, new GatewayError(403, 'Cross-site request refused', { metadata: { reason: 'cross_site_session_request' } }))
  }
  if (page === 'POST /team/sign-in') {
    const chosen = teamMember((await readForm(req)).get('user'))
    if (!chosen) return void html(res, 'No such team member', 400)
    return void res.writeHead(303, { location: '/team', 'set-cookie': teamSessions.cookieFor(chosen.hostId) }).end()
  }
  if (page === 'POST /team/sign-out') return void res.writeHead(303, { location: '/team', 'set-cookie': teamSessions.signOutCookie() }).end()
  if (!member) return void jsonError(res, new GatewayError(401, 'Sign in to the team demo first (/team)'))
  if (page === 'GET /team/spend') return void json(res, { data: await teamSpend(gateway, team) })
  if (page === 'POST /team/ask') {
    // The in-process client of the request's session user: billed and limited as the page's own calls, no HTTP hop.
    let text: unknown
    try {
      text = JSON.parse(await readText(req)).text
    } catch {}
    if (typeof text !== 'string' || !text.trim()) return void jsonError(res, new GatewayError(400, 'text: a message is required'))
    try {
      const completion = await clientFor(gateway, req, res).chat.completions.create({ model: 'demo/echo', messages: [{ role: 'user', content: text }] })
      return void json(res, completion)
    } catch (error) {
      if (error instanceof GatewayError) return void jsonError(res, error)
      throw error
    }
  }
  jsonError(res, new GatewayError(404, `No route ${page}`))
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
  if (url.pathname === '/team' || url.pathname.startsWith('/team/')) {
    return handleTeam(req, res, page, url.origin).catch((error) => {
      console.error('team demo:', error)
      if (!res.headersSent) jsonError(res, new GatewayError(500, 'Internal error'))
      else res.destroy()
    })
  }
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
  console.log(`Team demo (first-party, no key): ${origin}/team`)
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
