import { invalidRequest } from '../errors'

/** Fractional digits kept by the ledger (docs/money.md: at most 12). */
export const MONEY_SCALE = 12
/** One whole currency unit in ledger units (10^12). */
export const UNIT = 10n ** BigInt(MONEY_SCALE)

const DECIMAL_RE = /^([+-])?(\d+)(?:\.(\d+))?$/

/** Parses an exact decimal amount ("0.1", "-3", 12) into ledger units; rejects floats' binary noise and over 12 fractional digits. */
export function toUnits(amount: string | number | bigint, param = 'amount'): bigint {
  if (typeof amount === 'bigint') return amount * UNIT
  const text = typeof amount === 'number' ? numberToPlainString(amount, param) : amount.trim()
  const match = DECIMAL_RE.exec(text)
  if (!match) throw invalidRequest(`${param}: must be a decimal number such as "10" or "0.25"`, param)
  const [, sign, whole, fraction = ''] = match
  const significant = fraction.replace(/0+$/, '')
  if (significant.length > MONEY_SCALE) {
    throw invalidRequest(`${param}: at most ${MONEY_SCALE} fractional digits`, param)
  }
  const units = BigInt(whole) * UNIT + BigInt(significant.padEnd(MONEY_SCALE, '0') || '0')
  return sign === '-' ? -units : units
}

/** Formats ledger units as a plain decimal string without exponent or trailing zeros ("1", "0.1", "-2.5"). */
export function fromUnits(units: bigint): string {
  const negative = units < 0n
  // The digits split as text (no bigint division: this runs several times per request).
  const digits = (negative ? -units : units).toString()
  const cut = digits.length - MONEY_SCALE
  const whole = cut > 0 ? digits.slice(0, cut) : '0'
  const fraction = cut > 0 ? digits.slice(cut) : digits.padStart(MONEY_SCALE, '0')
  let end = fraction.length
  while (end > 0 && fraction.charCodeAt(end - 1) === 48) end--
  return `${negative ? '-' : ''}${whole}${end ? `.${fraction.slice(0, end)}` : ''}`
}

/** The shortest decimal text of a finite number, without exponent (0.1 → "0.1", 1e-7 → "0.0000001"). */
export function numberToPlainString(value: number, param = 'value'): string {
  if (!Number.isFinite(value)) throw invalidRequest(`${param}: must be a finite number`, param)
  // Shortest round-trip text of the double: 0.1 stays "0.1", never 0.1000000000000000055…
  const text = String(value)
  if (!/e/i.test(text)) return text
  const [mantissa, exponentText] = text.toLowerCase().split('e')
  const exponent = Number(exponentText)
  const negative = mantissa.startsWith('-')
  const [whole, fraction = ''] = mantissa.replace('-', '').split('.')
  const digits = whole + fraction
  const point = whole.length + exponent
  const plain =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`
  return (negative ? '-' : '') + plain
}
