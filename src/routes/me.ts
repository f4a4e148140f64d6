import { identitySchema, type Identity } from '../schemas/me'
import { defineRoute } from './define'
import { userLimitsView } from './users'

/** GET /me: the identity and credits behind the calling key (docs/api.md#identity). */
export const meRoute = defineRoute({
  method: 'GET',
  path: '/me',
  operationId: 'getMe',
  summary: 'The user, org, plan and credits of the calling API key',
  tag: 'Identity',
  auth: 'key',
  status: 200,
  response: identitySchema,
  async handler({ ctx, principal }): Promise<Identity> {
    const { user, org } = principal
    const [credits, limits] = await Promise.all([ctx.credits.get(org.id), userLimitsView(ctx, user, ctx.now())])
    return {
      user_id: user.id,
      email: user.email,
      org_name: org.name,
      org_id: org.id,
      plan: user.plan,
      credits,
      limits,
    }
  },
})
