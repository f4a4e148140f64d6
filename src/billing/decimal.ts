import { MONEY_SCALE, numberToPlainString } from './money'

/** An exact decimal: `coefficient / 10^scale`. */
export interface Decimal {
  readonly coefficient: bigint
  readonly scale: number
}

const DECIMAL_RE = /^([+-])?(\d*)(?:\.(\d*))?$/

// Strings parsed lately (prices and rates, parsed several times per request), bounded: emptied when full.
const parsed = new Map<string, Decimal>()
const PARSED_MAX = 4096

/** Parses a plain decimal string ("0.00000015", "3", "-1.5"); throws a TypeError for anything else. */
export function decimal(text: string | number | bigint): Decimal {
  if (typeof text === 'bigint') return { coefficient: text, scale: 0 }
  if (typeof text === 'number') {
    if (!Number.isFinite(text)) throw new TypeError(`not a finite number: ${text}`)
    text = numberToPlainString(text)
  }
  let value = parsed.get(text)
  if (value) return value
  value = parseDecimal(text)
  if (parsed.size >= PARSED_MAX) parsed.clear()
  parsed.set(text, value)
  return value
}

function parseDecimal(text: string): Decimal {
  const match = DECIMAL_RE.exec(text.trim())
  if (!match || (!match[2] && !match[3])) throw new TypeError(`not a decimal: ${JSON.stringify(text)}`)
  const [, sign, whole = '', fraction = ''] = match
  const coefficient = BigInt(`${whole}${fraction}` || '0')
  return { coefficient: sign === '-' ? -coefficient : coefficient, scale: fraction.length }
}

// Powers of ten up to 10^64, computed once (money is scaled by them several times per request).
const POWERS = Array.from({ length: 65 }, (_, n) => 10n ** BigInt(n))
const pow10 = (n: number) => (n < POWERS.length ? POWERS[n] : 10n ** BigInt(n))

/** The decimal as a plain string, exactly ("0.0125", "-3"): what decimal() parses back. */
export function decimalString(value: Decimal): string {
  const negative = value.coefficient < 0n
  const digits = (negative ? -value.coefficient : value.coefficient).toString().padStart(value.scale + 1, '0')
  const point = digits.length - value.scale
  return `${negative ? '-' : ''}${digits.slice(0, point)}${value.scale ? `.${digits.slice(point)}` : ''}`
}

/** a + b, exactly. */
export function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale)
  return { coefficient: a.coefficient * pow10(scale - a.scale) + b.coefficient * pow10(scale - b.scale), scale }
}

/** a × b, exactly. */
export function multiply(a: Decimal, b: Decimal): Decimal {
  return { coefficient: a.coefficient * b.coefficient, scale: a.scale + b.scale }
}

/** The sum of several decimals. */
export function sum(values: Decimal[]): Decimal {
  return values.reduce(add, ZERO)
}

/** Rounds half away from zero to ledger units (12 fractional digits): the one rounding of a request's cost. */
export function toLedgerUnits(value: Decimal): bigint {
  if (value.scale <= MONEY_SCALE) return value.coefficient * pow10(MONEY_SCALE - value.scale)
  const divisor = pow10(value.scale - MONEY_SCALE)
  const negative = value.coefficient < 0n
  const abs = negative ? -value.coefficient : value.coefficient
  const rounded = (abs + divisor / 2n) / divisor
  return negative ? -rounded : rounded
}

/** True when the decimal is zero. */
export const isZero = (value: Decimal): boolean => value.coefficient === 0n

/** Zero. */
export const ZERO: Decimal = { coefficient: 0n, scale: 0 }

/** Compares two decimals: negative when a < b, 0 when equal, positive when a > b. */
export function compare(a: Decimal, b: Decimal): number {
  const difference = add(a, { coefficient: -b.coefficient, scale: b.scale }).coefficient
  return difference < 0n ? -1 : difference > 0n ? 1 : 0
}
