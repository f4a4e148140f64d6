import type { LimitReset, SpendWindow } from './account-types'
import type { AtomicOps, Budget, CounterCharge, CounterWindow } from './engine-types'
import { createKeyMemo } from './key-memo'
import type { Kv } from './kv'

/**
 * Whose limits a budget counts against (docs/first-party.md#budgets-for-users-and-end-users): a user (by id), or an
 * end user of an org (by the org's id and a hash of the end user's id).
 */
export type SpendSubject =
  | { kind: 'user'; id: string }
  | { kind: 'end-user'; orgId: string; hash: string }
  | { kind: 'key'; hash: string }
  | { kind: 'org'; id: string }

/** The windows a tokens limit counts (docs/limits.md#tokens-spend-and-requests-in-flight). */
export type TokensWindow = 'minute' | 'day'

/** All time, or one of the windows a credit limit may reset with. */
export type SpendPeriod = 'total' | LimitReset

// The last part of a subject's spending counter's key, per period.
const USED: Readonly<Record<SpendPeriod, string>> = { total: 'used', daily: 'used-daily', weekly: 'used-weekly', monthly: 'used-monthly' }

/**
 * The counters and holds of users' and end users' limits (docs/first-party.md#budgets-for-users-and-end-users):
 * spending per period (`credits:user:<id>:used`, `…:used-daily`, `credits:end-user:<org>:<hash>:used-monthly`), the
 * requests a UTC minute admitted (`…:requests-minute`), and three holds keys per subject (`holds:user:<id>`,
 * `holds:user-running:<id>`, `holds:user-rate:<id>`; no key is a prefix of another: the fs driver makes folders of
 * prefixes).
 */
export function createSpendCountersStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  const base = (subject: SpendSubject) => {
    if (subject.kind === 'user') return ['user', subject.id]
    if (subject.kind === 'end-user') return ['end-user', subject.orgId, subject.hash]
    if (subject.kind === 'key') return ['key', subject.hash]
    return ['org', subject.id]
  }
  const holdsKey = (subject: SpendSubject, what: '' | '-running' | '-rate' | `-tokens-${TokensWindow}` | '-spend') => {
    const [kind, ...rest] = base(subject)
    return kv.key('holds', `${kind}${what}`, ...rest)
  }
  // A user's, key's or org's counters are named by the same strings on every request of theirs.
  const memos = { user: createKeyMemo(), key: createKeyMemo(), org: createKeyMemo() }
  const usedKey = (subject: SpendSubject, period: SpendPeriod) => {
    const name = USED[period]
    if (subject.kind === 'end-user') return kv.key('credits', 'end-user', subject.orgId, subject.hash, name)
    const owner = subject.kind === 'key' ? subject.hash : subject.id
    const memo = memos[subject.kind]
    return memo.get(owner, name) ?? memo.set(owner, name, kv.key('credits', subject.kind, owner, name))
  }
  const requestsKey = (subject: SpendSubject) => kv.key('credits', ...base(subject), 'requests-minute')
  const tokensKey = (subject: SpendSubject, window: TokensWindow) => kv.key('credits', ...base(subject), `tokens-${window}`)
  const spentKey = (subject: SpendSubject, window: SpendWindow) => kv.key('credits', ...base(subject), `spent-${window}`)
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
    /**
     * The budget of a subject's tokens per minute or day: `limit` − the tokens the UTC window from `windowStart` counted −
     * the tokens running requests hold; a request holds `tokens`, its most (docs/limits.md#tokens-spend-and-requests-in-flight).
     */
    tokensBudget: (subject: SpendSubject, window: TokensWindow, limit: number, windowStart: number, tokens: number): Budget => ({
      usedKey: tokensKey(subject, window),
      usedWindow: windowStart,
      holdsKey: holdsKey(subject, `-tokens-${window}`),
      limit: { units: BigInt(limit) },
      units: BigInt(tokens),
    }),
    /** The budget of a subject's spend per window: `units` − what the UTC window from `windowStart` spent − live holds (the request's most cost). */
    spendBudget: (subject: SpendSubject, window: SpendWindow, units: bigint, windowStart: number): Budget => ({
      usedKey: spentKey(subject, window),
      usedWindow: windowStart,
      holdsKey: holdsKey(subject, '-spend'),
      limit: { units },
    }),
    /** The count of a request's `tokens` in a subject's tokens window, for a hold's settlement to add. */
    tokensCharge: (subject: SpendSubject, window: TokensWindow, tokens: number, counted: CounterWindow): CounterCharge => ({
      key: tokensKey(subject, window),
      units: BigInt(tokens),
      window: counted,
    }),
    /** The charge of `units` to a subject's spend window, for a hold's settlement to add. */
    spendCharge: (subject: SpendSubject, window: SpendWindow, units: bigint, counted: CounterWindow): CounterCharge => ({
      key: spentKey(subject, window),
      units,
      window: counted,
    }),
    /** The tokens a subject's UTC window from `windowStart` counted. */
    readTokens: (subject: SpendSubject, window: TokensWindow, windowStart: number): Promise<bigint> => atomic.getUnits(tokensKey(subject, window), windowStart),
    /** What a subject spent in its spend window from `windowStart`. */
    readSpent: (subject: SpendSubject, window: SpendWindow, windowStart: number): Promise<bigint> => atomic.getUnits(spentKey(subject, window), windowStart),
    /** The charge of `units` to a subject's spending in a period, for a hold's settlement to add (with `window` for a windowed one). */
    usageCharge: (subject: SpendSubject, period: SpendPeriod, units: bigint, window?: CounterWindow): CounterCharge =>
      window ? { key: usedKey(subject, period), units, window } : { key: usedKey(subject, period), units },
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
