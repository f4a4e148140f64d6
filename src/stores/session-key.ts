import type { ApiKeyRecord, User } from './account-types'

/** The hash-like name of a user's session key (docs/first-party.md#session-keys): never a bearer secret, never stored. */
export const sessionKeyHash = (userId: string): string => `session-${userId}`

/**
 * The key a host session's requests act under (docs/first-party.md#session-keys): no secret, not stored, no limit of
 * its own (the user's limits apply); its usage counters and usage records name it `session-<user id>`.
 */
export function sessionKeyOf(user: User): ApiKeyRecord {
  return {
    hash: sessionKeyHash(user.id),
    user_id: user.id,
    org_id: user.org_id,
    label: 'session',
    created_at: user.created_at,
    last_used: null,
    expires_at: null,
    revoked: false,
    revoked_at: null,
    credit_limit: null,
  }
}
