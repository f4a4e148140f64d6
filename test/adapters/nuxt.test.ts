// model-gateway/nuxt in a real Nuxt 4 app: test/fixtures/nuxt-app, built from the packed package with Node ≥ 22.19
// (Node 24 from the npm registry when this one is older) and started from its .output, then the adapter contract
// over HTTP. The first run installs and builds (a few minutes); later runs reuse both while nothing changed.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXTURE_SECRET, prepareFixture, startFixture, type RunningFixture } from '../fixtures/nuxt-fixture'
import { describeContract } from './contract'
import { SLOW_ECHO_MODEL } from './contract-providers'

let fixture: RunningFixture

beforeAll(async () => {
  const { node } = await prepareFixture()
  fixture = await startFixture(node)
}, 40 * 60_000)
afterAll(() => fixture?.stop())

describe('model-gateway/nuxt in a built Nuxt 4 app', () => {
  it('serves the app’s own pages next to the gateway', async () => {
    const home = await fetch(`${fixture.url}/`)
    expect(home.status).toBe(200)
    expect(await home.text()).toContain('Nuxt fixture of model-gateway')
  })

  it('mounts only under the base path: other /api paths stay Nuxt’s', async () => {
    const other = await fetch(`${fixture.url}/api/v2/me`)
    expect(other.headers.get('content-type')).toMatch(/^text\/html/)
    expect(other.headers.get('x-request-id')).toBeNull()
    expect(await other.text()).toContain('Nuxt fixture of model-gateway')
  })

  it('keeps the records in Nitro’s storage mount when asked (nitroStorage: gateway, fs driver)', () => {
    const users = join(fixture.cwd, '.data/gateway/users')
    expect(existsSync(users)).toBe(true)
    expect(readdirSync(users)).toContain(fixture.bootstrap.userId)
  })

  it('takes the secret from runtimeConfig (NUXT_MODEL_GATEWAY_SECRET), not a random one', () => {
    expect(FIXTURE_SECRET.length).toBeGreaterThanOrEqual(32)
    expect(fixture.output()).not.toMatch(/no `secret` given/)
  })
})

describeContract('the adapter contract, check by check, over the Nuxt server', () => ({
  baseUrl: fixture.url,
  key: fixture.bootstrap.key,
  slowModel: SLOW_ECHO_MODEL,
  me: {
    user_id: fixture.bootstrap.userId,
    email: fixture.bootstrap.email,
    org_name: fixture.bootstrap.orgName,
    org_id: fixture.bootstrap.orgId,
    plan: fixture.bootstrap.plan,
    credits: { balance: '10', total_credits: '10', total_usage: '0' },
  },
}))

