// Personal data in text: detectors for e-mail addresses, phone numbers, payment card numbers and IBANs, their
// redaction in a whole text and in a stream cut into chunks anywhere (docs/policies.md#personal-data). Pure: imports
// nothing. Every detector's match is bounded in length and decided by at most a few characters around it, so a stream
// needs to hold back only the last `STREAM_HOLD` characters to redact exactly as the whole text would be.

/** A kind of personal data the detectors find. */
export type PiiKind = 'email' | 'phone' | 'card' | 'iban'

/** Every kind, in the order a tie between two matches at one place is broken (the longer first, then this order). */
export const PII_KINDS: readonly PiiKind[] = ['iban', 'card', 'email', 'phone']

/** The text each kind is replaced with. */
export const PII_PLACEHOLDERS: Readonly<Record<PiiKind, string>> = {
  email: '[REDACTED_EMAIL]',
  phone: '[REDACTED_PHONE]',
  card: '[REDACTED_CARD]',
  iban: '[REDACTED_IBAN]',
}

/** How many of each kind a text had redacted (never the values). */
export type PiiCounts = Record<PiiKind, number>

/** One piece of personal data found in a text: where it is (`start` inclusive, `end` exclusive) and its kind. */
export interface PiiMatch {
  kind: PiiKind
  start: number
  end: number
}

/** Characters a stream redactor holds back at most: longer than any match, with the characters after it a detector reads. */
export const STREAM_HOLD = 128

// Characters before a match a detector's look-behind reads at most; a stream keeps that many of what it already emitted.
const CONTEXT = 8

/** True when the digits pass the Luhn check of payment card numbers. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/** True when the IBAN (spaces removed, upper case) passes ISO 13616's mod-97 check: 15 to 34 characters, country, check digits. */
export function ibanValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false
  const moved = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (const ch of moved) {
    const value = ch >= 'A' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48
    remainder = value > 9 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97
  }
  return remainder === 1
}

// Each detector: a regular expression whose match is at most a fixed length (its look-behind reads at most CONTEXT
// characters, its look-ahead two), and the check that decides the match (and its end) or rejects it.
interface Detector {
  kind: PiiKind
  pattern: RegExp
  /** The end of the accepted match, or undefined to reject; `text` is the whole text, `start`/`text` of the pattern's match. */
  accept(text: string, start: number, match: string): number | undefined
}

// A local part of at most 40 characters, a domain of one to three labels of at most 22 characters and a top-level
// domain of 2 to 12 letters: at most 122 characters (longer addresses are not detected: docs/policies.md#personal-data).
const EMAIL =
  /(?<![A-Za-z0-9._%+-])[A-Za-z0-9_%+-](?:[A-Za-z0-9._%+-]{0,38}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,20}[A-Za-z0-9])?\.){1,3}[A-Za-z]{2,12}(?![A-Za-z0-9-]|\.[A-Za-z0-9])/g

// International numbers: + and a country code, then groups of digits (an area code in parentheses allowed), 8 to 15
// digits in all (E.164). National ones: a trunk 0 then groups separated by spaces or dashes, an area code in
// parentheses, or the North American 3-3-4 with one separator. Never a run of digits alone (timestamps, ids).
const PHONE =
  /(?<![\w+.,/]|\d[ .:-])(?:\+\d{1,3}(?:[ .-]?(?:\(\d{1,4}\)|\d{1,4})){1,6}|0\d{1,4}(?:[ -]\d{2,8}){1,4}|\(0?\d{2,4}\) ?\d{3,4}[ -]?\d{3,4}|\d{3}([-. ])\d{3}\1\d{4})(?![\w]|[ .-]\d)/g

// 13 to 19 digits, single spaces or dashes between them allowed; not part of a longer number or a word.
const CARD = /(?<![A-Za-z0-9_]|\d[ -])\d(?:[ -]?\d){12,18}/g

// Country code, check digits, then 11 to 30 letters or digits, single spaces between them allowed.
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}/g

const digitsOf = (s: string) => s.replace(/\D/g, '')

// The longest prefix of `match` that ends on a digit or letter not followed by another one (a separator or the end of
// the text next) and that `valid` accepts; shorter prefixes are tried when the longest is not valid.
function longestValid(text: string, start: number, match: string, min: number, valid: (compact: string) => boolean): number | undefined {
  for (let end = match.length; end > 0; end--) {
    const last = match[end - 1]
    if (last === ' ' || last === '-') continue
    const next = text[start + end]
    if (next !== undefined && /[A-Za-z0-9]/.test(next)) continue
    const compact = match.slice(0, end).replace(/[ -]/g, '')
    if (compact.length < min) return undefined
    if (valid(compact)) return start + end
  }
  return undefined
}

const DETECTORS: Detector[] = [
  {
    kind: 'iban',
    pattern: IBAN,
    accept: (text, start, match) => longestValid(text, start, match, 15, ibanValid),
  },
  {
    kind: 'card',
    pattern: CARD,
    accept: (text, start, match) => longestValid(text, start, match, 13, luhnValid),
  },
  { kind: 'email', pattern: EMAIL, accept: (_text, start, match) => start + match.length },
  {
    kind: 'phone',
    pattern: PHONE,
    accept: (_text, start, match) => {
      const digits = digitsOf(match).length
      return digits >= 8 && digits <= 15 ? start + match.length : undefined
    },
  },
]

/** Every piece of personal data of the kinds in `text` from `from` on, without overlaps: leftmost first, then longest. */
export function findPii(text: string, kinds: readonly PiiKind[] = PII_KINDS, from = 0): PiiMatch[] {
  const found: PiiMatch[] = []
  for (const detector of DETECTORS) {
    if (!kinds.includes(detector.kind)) continue
    const pattern = new RegExp(detector.pattern.source, 'g')
    pattern.lastIndex = from
    for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
      const end = detector.accept(text, m.index, m[0])
      if (end !== undefined) found.push({ kind: detector.kind, start: m.index, end })
      // Every start is tried on its own, so what is found at one place never depends on what was found before it.
      pattern.lastIndex = m.index + 1
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end || PII_KINDS.indexOf(a.kind) - PII_KINDS.indexOf(b.kind))
  const kept: PiiMatch[] = []
  let reach = from
  for (const match of found) {
    if (match.start < reach) continue
    kept.push(match)
    reach = match.end
  }
  return kept
}

/** Zero of each kind. */
export const noPii = (): PiiCounts => ({ email: 0, phone: 0, card: 0, iban: 0 })

/** The text with each piece of personal data of the kinds replaced by its placeholder, and how many of each were. */
export function redactText(text: string, kinds: readonly PiiKind[] = PII_KINDS): { text: string; counts: PiiCounts } {
  const counts = noPii()
  let out = ''
  let cursor = 0
  for (const match of findPii(text, kinds)) {
    out += text.slice(cursor, match.start) + PII_PLACEHOLDERS[match.kind]
    counts[match.kind]++
    cursor = match.end
  }
  return { text: out + text.slice(cursor), counts }
}

/** A redactor of a text that arrives in chunks (docs/policies.md#personal-data). */
export interface StreamRedactor {
  /** Takes the next chunk; returns the redacted text that is settled now (possibly empty). */
  write(chunk: string): string
  /** The stream ended: returns the rest, redacted. */
  end(): string
  /** How many of each kind were redacted so far. */
  counts(): PiiCounts
}

/**
 * A redactor that gives the same text as `redactText` on the whole stream however it is cut into chunks: it holds back
 * only the last `STREAM_HOLD` characters (which a match may still take) and emits the rest at once.
 */
export function createStreamRedactor(kinds: readonly PiiKind[] = PII_KINDS): StreamRedactor {
  const counts = noPii()
  // What was emitted's last characters (read by the detectors' look-behind), then the text held back.
  let context = ''
  let held = ''
  const flush = (final: boolean): string => {
    const text = context + held
    const limit = final ? text.length : text.length - STREAM_HOLD
    if (limit <= context.length) return ''
    let out = ''
    let cursor = context.length
    for (const match of findPii(text, kinds, context.length)) {
      // A match that starts before the limit is settled (it cannot grow beyond STREAM_HOLD); a later one may still change.
      if (match.start >= limit) break
      out += text.slice(cursor, match.start) + PII_PLACEHOLDERS[match.kind]
      counts[match.kind]++
      cursor = match.end
    }
    if (cursor < limit) {
      out += text.slice(cursor, limit)
      cursor = limit
    }
    context = text.slice(Math.max(0, cursor - CONTEXT), cursor)
    held = text.slice(cursor)
    return out
  }
  return {
    write(chunk) {
      held += chunk
      return flush(false)
    },
    end: () => flush(true),
    counts: () => ({ ...counts }),
  }
}
