import type { LimitReset } from './account-types'
import type { AtomicOps, Budget, CounterCharge, CounterWindow } from './engine-types'
import type { Kv } from './kv'

/**
 * Whose limits a budget counts against (docs/first-party.md#budgets-for-users-and-end-users): a user (by id), or an
 * end user of an org (by the org's id and a hash of the end user's id).
 */
export type SpendSubject = { kind: 'user'; id: string } | { kind: 'end-user'; orgId: string; hash: string }

/** All time, or one of the windows a credit limit may reset with. */
export type SpendPeriod = 'total' | LimitReset

/**
 * The counters and holds of users' and end users' limits (docs/first-party.md#budgets-for-users-and-end-users):
 * spending per period (`credits:user:<id>:used`, `…:used-daily`, `credits:end-user:<org>:<hash>:used-monthly`), the
 * requests a UTC minute admitted (`…:requests-minute`), and three holds keys per subject (`holds:user:<id>`,
 * `holds:user-running:<id>`, `holds:user-rate:<id>`; no key is a prefix of another: the fs driver makes folders of
 * prefixes).
 */
export function createSpendCountersStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  const base = (subject: SpendSubject) => (subject.kind === 'user' ? ['user', subject.id] : ['end-user', subject.orgId, subject.hash])
  const holdsKey = (subject: SpendSubject, what: '' | '-running' | '-rate') => {
    const [kind, ...rest] = base(subject)
    return kv.key('holds', `${kind}${what}`, ...rest)
  }
  const usedKey = (subject: SpendSubject, period: SpendPeriod) => kv.key('credits', ...base(subject), period === 'total' ? 'used' : `used-${period}`)
  const requestsKey = (subject: SpendSubject) => kv.key('credits', ...base(subject), 'requests-minute')
  return {
    /** The budget of a subject's credit limit: `units` − what it spent in the period (from `windowStart` when it resets) − live holds. */
    creditBudget: (subject: SpendSubject, period: SpendPeriod, units: bigint, windowStart?: number): Budget => ({
      usedKey: usedKey(subject, period),
      ...(windowStart !== undefined ? { usedWindow: windowStart } : {}),
      holdsKey: holdsKey(subject, ''),
      limit: { units },
    }),
    /** The budget of a subject's requests per minute: `perMinute` − the requests the UTC minute from `minuteStart` counted − those running; one unit a request. */
    rateBudget: (subject: SpendSubject, perMinute: number, minuteStart: number): Budget => ({
      usedKey: requestsKey(subject),
      usedWindow: minuteStart,
      holdsKey: holdsKey(subject, '-rate'),
      limit: { units: BigInt(perMinute) },
      units: 1n,
    }),
    /** The budget of a subject's requests at once: the cap − those running (a spent counter nothing ever adds to); one unit a request. */
    runningBudget: (subject: SpendSubject, cap: number): Budget => ({
      usedKey: kv.key('credits', ...base(subject), 'never-used'),
      holdsKey: holdsKey(subject, '-running'),
      limit: { units: BigInt(cap) },
      units: 1n,
    }),
    /** The charge of `units` to a subject's spending in a period, for a hold's settlement to add (with `window` for a windowed one). */
    usageCharge: (subject: SpendSubject, period: SpendPeriod, units: bigint, window?: CounterWindow): CounterCharge => ({
      key: usedKey(subject, period),
      units,
      ...(window ? { window } : {}),
    }),
    /** The count of one request in a subject's UTC minute, for a hold's settlement to add. */
    requestCharge: (subject: SpendSubject, window: CounterWindow): CounterCharge => ({ key: requestsKey(subject), units: 1n, window }),
    /** What a subject spent in a period (from `windowStart` for a windowed one: 0 when its counter counted an earlier window). */
    readUsage: (subject: SpendSubject, period: SpendPeriod, windowStart?: number): Promise<bigint> => atomic.getUnits(usedKey(subject, period), windowStart),
    /**
     * Removes an end user's counter (`key` relative to `credits:end-user`) in one atomic step if `expired` says so of
     * it as it is then (the sweep: docs/retention.md); true when removed.
     */
    async removeEndUserCounter(key: string, expired: (record: unknown) => boolean): Promise<boolean> {
      let removed = false
      await atomic.update<unknown>(kv.key('credits', 'end-user', key), (current) => {
        removed = current !== null && expired(current)
        return removed ? null : undefined
      })
      return removed
    },
    /** The requests a subject's UTC minute from `minuteStart` counted. */
    readRequests: (subject: SpendSubject, minuteStart: number): Promise<bigint> => atomic.getUnits(requestsKey(subject), minuteStart),
  }
}

/** The spend counters store's operations. */
export type SpendCountersStore = ReturnType<typeof createSpendCountersStore>
