const MARK = '\u0000exact:'
const MARK_RE = /"\\u0000exact:(-?\d+(?:\.\d+)?)"/g

/** A JSON number written exactly as its decimal text (no binary rounding, no exponent). */
export class ExactNumber {
  constructor(readonly text: string) {
    if (!/^-?\d+(?:\.\d+)?$/.test(text)) throw new TypeError(`not a plain decimal: ${text}`)
  }
  /** The value as a JS number (for code that reads it back). */
  valueOf(): number {
    return Number(this.text)
  }
  /** A marked string that stringifyExact turns back into the bare number (a plain replacer would slow every key). */
  toJSON(): string {
    return MARK + this.text
  }
}

/** JSON.stringify that writes ExactNumber values as bare decimal numbers. */
export function stringifyExact(value: unknown): string {
  const text = JSON.stringify(value)
  return text.includes('\\u0000exact:') ? text.replace(MARK_RE, '$1') : text
}

/** A copy of a JSON-like value with its ExactNumber values as plain numbers: what parsing its stringifyExact text gives. */
export function plainNumbers(value: unknown): unknown {
  if (value instanceof ExactNumber) return Number(value.text)
  if (Array.isArray(value)) return value.map(plainNumbers)
  if (value === null || typeof value !== 'object') return value
  const plain: Record<string, unknown> = {}
  for (const key in value as Record<string, unknown>) plain[key] = plainNumbers((value as Record<string, unknown>)[key])
  return plain
}
