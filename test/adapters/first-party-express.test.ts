import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterAll, describe, it } from 'vitest'
import { clientFor, toExpressHandler } from '../../adapters/express'
import { createGateway, demo, GatewayError, type Gateway } from '../../src/index'
import { createCustomer, TEST_SECRET } from '../helpers/server'
import { runFirstPartyContract } from './first-party-contract'

const servers: Server[] = []
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
})

type SignedIn = IncomingMessage & { user?: { id: string; email: string } }

// The app's own sign-in middleware: its cookie names the user, put on `req.user` (as Passport or express-session do).
const signIn = (req: SignedIn, _res: unknown, next: () => void) => {
  const id = /(?:^|;\s*)host_user=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1]
  if (id) req.user = { id, email: `${id}@host.example` }
  next()
}

// The gateway reads the app's `req.user` through the h3 event's Node request.
const gatewayWithSessions = () =>
  createGateway({
    secret: TEST_SECRET,
    logger: false,
    providers: [demo()],
    session: {
      user: (event) => (event.runtime?.node?.req as SignedIn | undefined)?.user ?? null,
      onNewUser: () => ({ credits: '1' }),
    },
  })

const listen = async (app: express.Express) => {
  const server = createServer(app)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

// The host route: the in-process client of the request's user, its errors answered with their status.
const askRoute = (gateway: Gateway) => async (req: express.Request, res: express.Response) => {
  try {
    const ai = clientFor(gateway, req, res)
    res.json(await ai.chat.completions.create({ model: 'demo/echo', messages: [{ role: 'user', content: req.body.text }] }))
  } catch (error) {
    res.status(error instanceof GatewayError ? error.status : 500).json({ error: String(error) })
  }
}

describe('first-party mode in Express (cookie session on req.user, clientFor)', () => {
  it('Express 5, the gateway mounted at the root (after the app’s own routes: it answers every other path)', async () => {
    const gateway = gatewayWithSessions()
    const { key } = await createCustomer(gateway, { credits: '1' })
    const app = express()
    app.use(signIn)
    app.post('/host/ask', express.json(), askRoute(gateway))
    app.use(toExpressHandler(gateway))
    const url = await listen(app)
    await runFirstPartyContract({ api: `${url}/api/v1`, host: url, key, echo: (text) => `Echo: ${text}` })
  })

  it('Express 5, mounted under /ai after express.json()', async () => {
    const gateway = gatewayWithSessions()
    const { key } = await createCustomer(gateway, { credits: '1' })
    const app = express()
    app.use(signIn)
    app.use(express.json())
    app.use('/ai', toExpressHandler(gateway))
    app.post('/host/ask', askRoute(gateway))
    const url = await listen(app)
    await runFirstPartyContract({ api: `${url}/ai/api/v1`, host: url, key, echo: (text) => `Echo: ${text}` })
  })
})
