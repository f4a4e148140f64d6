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
