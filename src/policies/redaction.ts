import { createStreamRedactor, type PiiCounts, type PiiKind, redactText } from './pii'
import { rulesFor } from './rules'
import type { Principal } from '../stores/account-types'
import type { GatewayPolicy } from './types'

/** The counts worth recording: the kinds found at least once (never the values). */
const found = (counts: PiiCounts): Record<string, number> | undefined => {
  const note: Record<string, number> = {}
  for (const [kind, n] of Object.entries(counts)) if (n > 0) note[kind] = n
  return Object.keys(note).length ? note : undefined
}

/**
 * The built-in policy of a `redact` rule (docs/policies.md#personal-data): on input, the request's text with its
 * personal data replaced before it leaves; on output, the whole answer's text and each streamed choice's, across
 * chunk boundaries. What it found is recorded as counts per kind.
 */
export function redactionPolicy(redact: { input: boolean; output: boolean; kinds: readonly PiiKind[] }): GatewayPolicy {
  const { kinds } = redact
  const policy: GatewayPolicy = { name: 'redact' }
  if (redact.input)
    policy.request = (request) => {
      const counts = { email: 0, phone: 0, card: 0, iban: 0 }
      for (const text of request.texts) for (const [kind, n] of Object.entries(redactText(text, kinds).counts)) counts[kind as PiiKind] += n
      const note = found(counts)
      return note ? { rewrite: { text: (text) => redactText(text, kinds).text }, note } : undefined
    }
  if (redact.output) {
    policy.response = (response) => {
      const counts = { email: 0, phone: 0, card: 0, iban: 0 }
      for (const text of response.texts) for (const [kind, n] of Object.entries(redactText(text, kinds).counts)) counts[kind as PiiKind] += n
      const note = found(counts)
      return note ? { text: (text) => redactText(text, kinds).text, note } : undefined
    }
    policy.stream = () => {
      const redactor = createStreamRedactor(kinds)
      return { write: (text) => redactor.write(text), end: () => redactor.end(), note: () => found(redactor.counts()) }
    }
  }
  return policy
}

/** The policies a request runs (docs/policies.md): the built-in ones its rules ask for (redaction), then the host's. */
export function policiesFor(host: readonly GatewayPolicy[], principal: Principal): readonly GatewayPolicy[] {
  const redact = rulesFor(principal).redact
  return redact ? [redactionPolicy(redact), ...host] : host
}
