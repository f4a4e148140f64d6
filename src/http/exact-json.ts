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

// The amounts the gateway's answers write exactly (docs/chat.md#usage-and-cost). A quote inside a JSON string is
// always escaped, so the lookbehind keeps string contents out.
const AMOUNT_RE = /(?<!\\)"(cost|cost_eur|upstream_inference_cost|upstream_inference_prompt_cost|upstream_inference_completions_cost)":(-?\d+(?:\.\d+)?)/g

/**
 * JSON.parse of the gateway's own answer (a chat completion or chunk, for the APIs translated from it) whose amounts
 * stay exact: they are read as the marked strings stringifyExact writes back as the same bare numbers, never as
 * binary floats (which would round them, and write small ones with an exponent).
 */
export function parseExact<T = Record<string, unknown>>(text: string): T {
  return JSON.parse(text.replace(AMOUNT_RE, '"$1":"\\u0000exact:$2"')) as T
}

/** JSON.stringify that writes ExactNumber values as bare decimal numbers. */
export function stringifyExact(value: unknown): string {
  const text = JSON.stringify(value)
  return text.includes('\\u0000exact:') ? text.replace(MARK_RE, '$1') : text
}
