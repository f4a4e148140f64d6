import { fromUnits } from '../billing/money'
import { userUsage } from '../billing/spend-limits'
import { limitsOf, limitsPatchOf, withLimits } from '../billing/spend-limits-input'
import type { GatewayContext } from '../context'
import { notFound } from '../errors'
import type { User } from '../stores/account-types'
import { limitsPatchSchema, oneUserSchema, userParamsSchema } from '../schemas/users'
import { defineRoute } from './define'

/** A user's limits and what they used at `now`, as GET /me and PATCH /users/{id} show them (EUR as decimal strings). */
export async function userLimitsView(ctx: GatewayContext, user: User, now: number) {
  const used = await userUsage(ctx, user, now)
  return {
    ...limitsOf(user),
    usage: fromUnits(used.usage),
    usage_daily: fromUnits(used.usage_daily),
    usage_weekly: fromUnits(used.usage_weekly),
    usage_monthly: fromUnits(used.usage_monthly),
    limit_remaining: used.limit_remaining === null ? null : fromUnits(used.limit_remaining),
    requests_this_minute: Number(used.requests_this_minute),
    in_flight: used.in_flight === null ? null : Number(used.in_flight),
  }
}

/** PATCH /users/{id}: changes the limits of a user of the management key's org (docs/first-party.md#budgets-for-users-and-end-users). */
export const updateUserRoute = defineRoute({
  method: 'PATCH',
  path: '/users/:id',
  operationId: 'updateUser',
  summary: 'Change a user’s credit limit, its reset, requests per minute and requests at once (management key)',
  tag: 'Identity',
  auth: 'key',
  keyKind: 'management',
  status: 200,
  params: userParamsSchema,
  body: limitsPatchSchema,
  response: oneUserSchema,
  async handler({ ctx, principal, params, body }) {
    const patch = limitsPatchOf(body)
    // Only the users of the key's own org: any other is 404, revealing nothing.
    const user = await ctx.accounts
      .changeUser(params.id, (current) => {
        if (current.org_id !== principal.org.id) throw notFound(`User ${params.id} not found`)
        return withLimits(current, patch)
      })
      .catch((error) => {
        throw error?.status === 404 ? notFound(`User ${params.id} not found`) : error
      })
    return {
      data: {
        id: user.id,
        email: user.email,
        org_id: user.org_id,
        plan: user.plan,
        disabled: user.disabled,
        limits: await userLimitsView(ctx, user, ctx.now()),
      },
    }
  },
})
