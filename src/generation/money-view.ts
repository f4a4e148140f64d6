import type { Charged } from '../billing/charge'
import { fromUnits } from '../billing/money'
import { ExactNumber } from '../http/exact-json'

/** A ledger amount (10^-12 units) as an exact JSON number, as the answers write amounts (docs/chat.md#usage-and-cost). */
export const exactAmount = (units: bigint): ExactNumber => new ExactNumber(fromUnits(units))

/** What a charged request shows of its charge in every API's usage object: `cost` (pricing currency), `cost_eur`, `is_byok`. */
export const chargeView = (charged: Charged, currency: string) => ({
  cost: exactAmount(charged.units),
  cost_currency: currency,
  cost_eur: exactAmount(charged.eurUnits),
  is_byok: charged.byok,
})
