import { loadSecret as loadCliSecret } from '../src/cli/secret'
import type { Gateway } from '../src/index'

export const DEMO_EMAIL = 'demo@example.com'

/** The playground's secret: GATEWAY_SECRET, else one generated on first start and kept in the data folder (shared with the CLI). */
export function loadSecret(dataDir: string): string {
  return loadCliSecret(dataDir, { create: true }).secret
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
