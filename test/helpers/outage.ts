import { expect } from 'vitest'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import type { Gateway } from '../../src/index'
import { readSse } from './sse'

/** A whole answer read: status, body (JSON, or a stream's events as readSse gives them), headers, and the time it took. */
export interface TimedAnswer {
  status: number
  body: any
  headers: Headers
  ms: number
}

/** Sends a request and reads its whole answer, timed from the send to its last byte. */
export async function timed(send: () => Promise<Response>): Promise<TimedAnswer> {
  const at = performance.now()
  const res = await send()
  const body: any = res.headers.get('content-type')?.startsWith('text/event-stream') ? await readSse(res) : await res.json()
  return { status: res.status, body, headers: res.headers, ms: performance.now() - at }
}

/**
 * Asserts an org's money: `served` usage records and as many ledger charges, the balance's decrease (total usage) =
 * Σ usage records = Σ ledger charges (more than 0), and nothing held on any budget of the customer's key.
 */
export async function expectReconciled(gateway: Gateway, customer: { key: string; user: { org_id: string } }, served: number): Promise<void> {
  const credits = await gateway.admin.getCredits(customer.user.org_id)
  const records = await gateway.admin.usage(customer.user.org_id)
  const ledger = (await gateway.admin.ledger(customer.user.org_id)).filter((e) => e.kind === 'charge')
  expect(records).toHaveLength(served)
  expect(ledger).toHaveLength(served)
  const recorded = records.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)
  expect(toUnits(credits.total_usage)).toBe(recorded)
  expect(ledger.reduce((sum, e) => sum + toUnits(e.amount), 0n)).toBe(recorded)
  expect(recorded).toBeGreaterThan(0n)
  const principal = (await gateway.admin.findUserByKey(customer.key))!
  for (const budget of budgetsOf(gateway.context, principal).budgets) expect(await gateway.context.holds.held(budget, Date.now())).toBe(0n)
}

/**
 * Asserts the 503 of a storage wait past its bound (docs/operations.md#when-the-storage-fails), answered within the
 * bound and `marginMs`: the envelope names the storage and the bound, never where the storage runs (`port`).
 */
export function expectStorageTimeout(answer: TimedAnswer, storage: { name: string; label: string; boundMs: number; marginMs: number; port: number }): void {
  expect(answer.status).toBe(503)
  expect(answer.ms).toBeLessThan(storage.boundMs + storage.marginMs)
  expect(answer.headers.get('retry-after')).toBe('5')
  expect(answer.body.error).toEqual({
    code: 503,
    type: 'no_provider_available',
    message: `The gateway's storage (${storage.label}) did not answer within ${storage.boundMs} ms: try again shortly`,
    metadata: { error_type: 'storage_unavailable', storage: storage.name, timeout_ms: storage.boundMs },
  })
  expect(JSON.stringify(answer.body)).not.toContain(String(storage.port))
}
