import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { artifacts, hasChromium, playgroundInBrowser } from '../helpers/browser'

describe.skipIf(!hasChromium)('the playground’s PKCE example app in Chromium', () => {
  const env = playgroundInBrowser()

  it('starts the flow, signs in, approves, exchanges the code, and ends with a key that answers /me', async () => {
    const page = await env.browser.newPage()
    await page.goto(`${env.playground.url}/example-app`)
    await page.getByRole('button', { name: 'Connect with model-gateway' }).click()

    // Not signed in yet: the gateway sends us to the host's sign-in page, which returns us to the flow.
    await page.waitForURL(/\/sign-in\?return_to=/)
    await page.getByRole('button', { name: /Sign in as demo@example.com/ }).click()

    await page.waitForURL(/\/api\/v1\/auth\/consent\?request=/)
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Allow ${env.playground.url} to use your account?`)
    await page.getByRole('button', { name: 'Approve' }).click()

    await page.waitForURL(/\/example-app\/callback\?code=/)
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('Connected: the key works.')
    const key = (await page.locator('#key').textContent())!
    expect(key).toMatch(/^sk-service-v1-[0-9a-f]{64}$/)
    const shown = JSON.parse((await page.locator('#me').textContent())!)
    expect(shown).toMatchObject({ email: 'demo@example.com', org_name: 'Demo org' })
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: join(artifacts, 'pkce-example-app.png'), fullPage: true })

    // The key works outside the browser too.
    const me = await fetch(`${env.playground.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
    expect(me.status).toBe(200)
    expect((await me.json()).email).toBe('demo@example.com')
  }, 60_000)

  it('returns to the app with access_denied when the user denies', async () => {
    const page = await env.browser.newPage()
    await page.goto(`${env.playground.url}/example-app`)
    await page.getByRole('button', { name: 'Connect with model-gateway' }).click()
    // A new page is a new browser context: signed out again.
    await page.waitForURL(/\/sign-in\?return_to=/)
    await page.getByRole('button', { name: /Sign in as/ }).click()
    await page.waitForURL(/\/api\/v1\/auth\/consent/)
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.waitForURL(/\/example-app\/callback\?error=access_denied/)
    await expect.poll(() => page.locator('#status').textContent()).toBe('Not connected: access_denied')
  }, 60_000)
})
