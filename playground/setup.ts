import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Gateway } from '../src/index'

export const DEMO_EMAIL = 'demo@example.com'

/** The playground's secret: GATEWAY_SECRET, else one generated on first start and kept in the data folder. */
export function loadSecret(dataDir: string): string {
  if (process.env.GATEWAY_SECRET) return process.env.GATEWAY_SECRET
  mkdirSync(dataDir, { recursive: true })
  const file = join(dataDir, 'secret')
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 })
  return readFileSync(file, 'utf8').trim()
}

/** Creates the demo org, user and credits on first start; returns a key only when one was issued now. */
export async function ensureDemoAccount(gateway: Gateway, options: { issueKey: boolean }): Promise<{ key?: string; created: boolean }> {
  let user = await gateway.admin.findUserByEmail(DEMO_EMAIL)
  const created = !user
  if (!user) {
    const org = await gateway.admin.createOrg({ name: 'Demo org' })
    user = await gateway.admin.createUser({ email: DEMO_EMAIL, orgId: org.id, plan: 'pay_as_you_go' })
    await gateway.admin.addCredits(org.id, '10', 'playground welcome credits')
  }
  if (!created && !options.issueKey) return { created }
  const { key } = await gateway.admin.issueKey({ userId: user.id, label: 'playground demo key' })
  return { key, created }
}
