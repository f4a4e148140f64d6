import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterEach, describe, expect, it } from 'vitest'
import { toExpressHandler } from '../../adapters/express'
import { toNodeHandler } from '../../adapters/node'
import { createGateway, demo, type Gateway } from '../../src/index'
import { runContract } from './contract'
import { slowEcho } from './contract-providers'
import { createCustomer, TEST_SECRET } from '../helpers/server'

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))))
})

const listen = async (handler: Parameters<typeof createServer>[1]) => {
  const server = createServer(handler)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const setUp = async (): Promise<{ gateway: Gateway; key: string }> => {
  const gateway = createGateway({ secret: TEST_SECRET, logger: false, providers: [demo(), slowEcho(demo())] })
  const { key } = await createCustomer(gateway, { credits: '5' })
  return { gateway, key }
}

describe('the adapter contract', () => {
  it('node:http (model-gateway/node)', async () => {
    const { gateway, key } = await setUp()
    await runContract(await listen(toNodeHandler(gateway)), key)
  })

  it('Express 5, at the root (model-gateway/express)', async () => {
    const { gateway, key } = await setUp()
    const app = express()
    app.use(toExpressHandler(gateway))
    await runContract(await listen(app), key)
  })

  it('Express 5, mounted under /ai after express.json() and next to the app’s own routes', async () => {
    const { gateway, key } = await setUp()
    // The README example.
    const app = express()
    app.use(express.json())
    app.get('/hello', (_req, res) => void res.send('my app'))
    app.use('/ai', toExpressHandler(gateway))
    const url = await listen(app)
    await runContract(`${url}/ai`, key)
    expect(await (await fetch(`${url}/hello`)).text()).toBe('my app')
    // express.json() parsed these bodies first: the gateway still validates them, and its errors keep the envelope.
    const bad = await fetch(`${url}/ai/api/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'demo/echo', messages: [] }) })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toMatchObject({ type: 'invalid_request', param: 'messages' })
    const whole = await fetch(`${url}/ai/api/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'parsed first' }] }) })
    expect((await whole.json()).choices[0].message.content).toBe('Echo: parsed first')
  })

  it('Express with express.raw() before it: the raw body is still read', async () => {
    const { gateway, key } = await setUp()
    const app = express()
    app.use(express.raw({ type: '*/*' }))
    app.use(toExpressHandler(gateway))
    await runContract(await listen(app), key)
  })
})
