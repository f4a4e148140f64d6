import { serve, type GatewayServer } from '../../adapters/node'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index'

/** A gateway served on a real node:http server on 127.0.0.1, with helpers for the tests. */
export interface TestGateway {
  gateway: Gateway
  url: string
  server: GatewayServer
  /** fetch() against the server, path relative to its origin. */
  request(path: string, init?: RequestInit): Promise<Response>
  close(): Promise<void>
}

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123'

/**
 * Starts a gateway on a free port of 127.0.0.1. Its close() drains for at most 1 s unless `drainTimeoutMs` is given
 * (30 s by default), so that a test leaving a stream open does not hold the suite.
 */
export async function startGateway(options: GatewayOptions = {}): Promise<TestGateway> {
  const gateway = createGateway({ secret: TEST_SECRET, logger: false, drainTimeoutMs: 1000, ...options })
  const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
  return {
    gateway,
    url: server.url,
    server,
    request: (path, init) => fetch(server.url + path, init),
    close: () => server.close(),
  }
}

/** Creates a user with credits and a key through the admin API. */
export async function createCustomer(gateway: Gateway, input: { email?: string; credits?: string; orgName?: string; plan?: string } = {}) {
  const user = await gateway.admin.createUser({
    email: input.email ?? `user-${Math.random().toString(36).slice(2)}@example.com`,
    orgName: input.orgName,
    plan: input.plan,
  })
  if (input.credits) await gateway.admin.addCredits(user.org_id, input.credits)
  const issued = await gateway.admin.issueKey({ userId: user.id, label: 'test key' })
  return { user, key: issued.key, record: issued.record, auth: { authorization: `Bearer ${issued.key}` } }
}
