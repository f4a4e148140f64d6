import * as v from 'valibot'
import { uuidSchema } from './common'
import { userLimitsSchema } from './users'

/** The identity behind the calling key (docs/api.md#identity). */
export const identitySchema = v.object({
  user_id: v.string(),
  email: v.string(),
  org_name: v.string(),
  org_id: uuidSchema,
  plan: v.string(),
  credits: v.object({
    balance: v.string(),
    total_credits: v.string(),
    total_usage: v.string(),
  }),
  /** The user's own limits and what it used (docs/first-party.md#budgets-for-users-and-end-users). */
  limits: userLimitsSchema,
})

/** The identity object. */
export type Identity = v.InferOutput<typeof identitySchema>
