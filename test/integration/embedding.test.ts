import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { H3 } from 'h3'
import { toNodeHandler as h3NodeHandler } from 'h3/node'
import { afterEach, describe, expect, it } from 'vitest'
import { toNodeHandler } from '../../adapters/node'
import { createGateway } from '../../src/index'
import { createCustomer, TEST_SECRET } from '../helpers/server'

let server: Server | undefined
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())))

const listen = (s: Server) => new Promise<string>((done) => s.listen(0, '127.0.0.1', () => done(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)))

describe('embedding in a host server', () => {
  it('runs inside an existing node:http server next to the host’s own routes (the README example)', async () => {
    const gateway = createGateway({ secret: TEST_SECRET, logger: false })
    const api = toNodeHandler(gateway)
    server = createServer((req, res) => {
      if (req.url?.startsWith('/api/')) return api(req, res)
      res.end('my app')
    })
    const url = await listen(server)
    const { auth } = await createCustomer(gateway, { credits: '2' })
    expect(await (await fetch(`${url}/`)).text()).toBe('my app')
    const me = await fetch(`${url}/api/v1/me`, { headers: auth })
    expect(me.status).toBe(200)
    expect((await me.json()).credits.balance).toBe('2')
  })

  it('mounts single route handlers in a host h3 app, at paths the host chooses', async () => {
    const gateway = createGateway({ secret: TEST_SECRET, logger: false })
    const host = new H3()
    host.get('/whoami', gateway.handlers.getMe)
    host.get('/docs/openapi.json', gateway.handlers.getOpenApiDocument)
    host.get('/credentials/:id', gateway.handlers.getByokCredential)
    server = createServer(h3NodeHandler(host))
    const url = await listen(server)
    const { user, auth } = await createCustomer(gateway)
    const me = await fetch(`${url}/whoami`, { headers: { ...auth, 'x-request-id': 'host-1' } })
    expect(me.status).toBe(200)
    expect(me.headers.get('x-request-id')).toBe('host-1')
    expect((await me.json()).user_id).toBe(user.id)
    expect((await fetch(`${url}/whoami`)).status).toBe(401)
    expect((await fetch(`${url}/docs/openapi.json`)).status).toBe(200)
    const bad = await fetch(`${url}/credentials/nope`, { headers: auth })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error.param).toBe('id')
  })

  it('serves web-standard Requests through fetch, under a custom base path', async () => {
    const gateway = createGateway({ secret: TEST_SECRET, logger: false, basePath: '/ai/' })
    const { auth } = await createCustomer(gateway, { credits: '0.5' })
    const res = await gateway.fetch(new Request('http://gateway.local/ai/me', { headers: auth }))
    expect(res.status).toBe(200)
    expect((await res.json()).credits.total_credits).toBe('0.5')
    expect((await gateway.fetch(new Request('http://gateway.local/api/v1/me', { headers: auth }))).status).toBe(404)
    const doc = await (await gateway.fetch(new Request('http://gateway.local/ai/openapi.json'))).json()
    expect(Object.keys(doc.paths)).toContain('/ai/chat/completions')
  })

  it('requires a key for the catalogue when publicCatalogue is false', async () => {
    const open = createGateway({ secret: TEST_SECRET, logger: false })
    const closed = createGateway({ secret: TEST_SECRET, logger: false, publicCatalogue: false })
    const listed = await open.fetch(new Request('http://x/api/v1/models'))
    expect(listed.status).toBe(200)
    expect(await listed.json()).toEqual({ object: 'list', data: [], total_count: 0, links: { next: null } })
    const res = await closed.fetch(new Request('http://x/api/v1/models'))
    expect(res.status).toBe(401)
    expect((await closed.fetch(new Request('http://x/api/v1/providers'))).status).toBe(401)
  })

  it('rejects a secret shorter than 32 characters at creation', () => {
    expect(() => createGateway({ secret: 'short', logger: false })).toThrow(/at least 32 characters/)
  })
})
