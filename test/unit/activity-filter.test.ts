import { describe, expect, it } from 'vitest'
import { activityFilter } from '../../src/routes/usage'
import type { Principal } from '../../src/stores/account-types'

// Whose usage GET /activity shows (docs/usage.md#who-sees-what). The HTTP tests (test/integration/activity.test.ts,
// usage-per-user.test.ts) cover keys; a host session's principal comes from the host's own session,
// so its rule is checked here on the principal itself.

const OWN = 'a'.repeat(64)
const OTHER = 'b'.repeat(64)
const principal = (over: { management?: boolean; via?: 'key' | 'session' } = {}) =>
  ({
    key: { hash: OWN, management: over.management === true },
    user: { id: 'u-1' },
    org: { id: 'o-1' },
    via: over.via,
  }) as unknown as Principal

describe('activityFilter', () => {
  it('a management key reads its whole org, filtered as asked', () => {
    expect(activityFilter(principal({ management: true }), {})).toEqual({ keyHash: undefined, userId: undefined, endUser: undefined })
    expect(activityFilter(principal({ management: true }), { api_key_hash: OTHER.toUpperCase(), user_id: 'u-2', end_user: 'e' })).toEqual({
      keyHash: OTHER,
      userId: 'u-2',
      endUser: 'e',
    })
  })

  it('an API key reads only its own key, another key’s hash is a 403 naming api_key_hash', () => {
    expect(activityFilter(principal(), { user_id: 'u-2', end_user: 'e' })).toEqual({ keyHash: OWN, userId: 'u-2', endUser: 'e' })
    expect(activityFilter(principal({ via: 'key' }), { api_key_hash: OWN })).toMatchObject({ keyHash: OWN })
    expect(() => activityFilter(principal(), { api_key_hash: OTHER })).toThrow(expect.objectContaining({ status: 403, param: 'api_key_hash' }))
  })

  it('a host session reads only its own user, through any key; another user is a 403 naming user_id', () => {
    expect(activityFilter(principal({ via: 'session' }), {})).toEqual({ keyHash: undefined, userId: 'u-1', endUser: undefined })
    expect(activityFilter(principal({ via: 'session' }), { user_id: 'u-1', api_key_hash: OTHER, end_user: 'e' })).toEqual({
      keyHash: OTHER,
      userId: 'u-1',
      endUser: 'e',
    })
    expect(() => activityFilter(principal({ via: 'session' }), { user_id: 'u-2' })).toThrow(expect.objectContaining({ status: 403, param: 'user_id' }))
    // A session's key is never a management key, but even one would not widen a session to the org.
    expect(activityFilter(principal({ via: 'session', management: true }), {})).toMatchObject({ userId: 'u-1' })
  })
})
