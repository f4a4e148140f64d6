import { describe, expect, it } from 'vitest'
import { PII_KINDS, STREAM_HOLD, createStreamRedactor, findPii, ibanValid, luhnValid, redactText, type PiiKind } from '../../src/policies/pii'

const only = (text: string, kind: PiiKind) => findPii(text, [kind]).map((m) => text.slice(m.start, m.end))

describe('checksums', () => {
  it('Luhn accepts real test card numbers and refuses one digit off', () => {
    for (const n of ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '4222222222222']) expect(luhnValid(n), n).toBe(true)
    for (const n of ['4111111111111112', '5555555555554445', '378282246310006', '', '41111x1111111111']) expect(luhnValid(n), n).toBe(false)
  })

  it('mod-97 accepts real IBANs and refuses a wrong check digit, a short or malformed one', () => {
    for (const n of ['DE89370400440532013000', 'GB82WEST12345698765432', 'FR1420041010050500013M02606', 'NL91ABNA0417164300', 'BE68539007547034'])
      expect(ibanValid(n), n).toBe(true)
    for (const n of ['DE89370400440532013001', 'GB83WEST12345698765432', 'DE8937040044', 'de89370400440532013000', '1289370400440532013000'])
      expect(ibanValid(n), n).toBe(false)
  })
})

describe('detectors', () => {
  it('e-mail addresses, and near misses', () => {
    expect(only('Mail jane.doe+tag@example.co.uk or JOHN@Example.COM.', 'email')).toEqual(['jane.doe+tag@example.co.uk', 'JOHN@Example.COM'])
    expect(only('a_b@sub-domain.example.io, x@y.de', 'email')).toEqual(['a_b@sub-domain.example.io', 'x@y.de'])
    for (const miss of ['user@localhost', '@example.com', 'user@.com', 'user@example', 'user@example.c', 'name at example.com', 'user@-bad.com'])
      expect(only(miss, 'email'), miss).toEqual([])
  })

  it('phone numbers in international and national forms', () => {
    const text =
      'Call +44 20 7946 0958, +1 (415) 555-2671, +14155552671, +33 1 23 45 67 89, 020 7946 0958, 01 23 45 67 89, (415) 555-2671, 415-555-2671, 415.555.2671, 030 12345678'
    expect(only(text, 'phone')).toEqual([
      '+44 20 7946 0958',
      '+1 (415) 555-2671',
      '+14155552671',
      '+33 1 23 45 67 89',
      '020 7946 0958',
      '01 23 45 67 89',
      '(415) 555-2671',
      '415-555-2671',
      '415.555.2671',
      '030 12345678',
    ])
    expect(only('Tel:+49 30 1234567', 'phone')).toEqual(['+49 30 1234567'])
  })

  it('no phone in plain long numbers, dates, times, addresses, versions or thousands', () => {
    for (const miss of [
      '1700000000',
      '1700000000123',
      'id 12345678901',
      '2024-01-15',
      '2024-01-15 10:30:00',
      '192.168.100.200',
      '123 456 789',
      '1 000 000',
      'v1.22.333',
      '+123',
      '415-555-267',
      '415-555.2671',
      'order #0123456789',
    ])
      expect(only(miss, 'phone'), miss).toEqual([])
  })

  it('card numbers only when Luhn passes, with spaces or dashes, and not inside longer numbers', () => {
    expect(only('Card 4111 1111 1111 1111 exp 12/25, 5555-5555-5555-4444, 378282246310005.', 'card')).toEqual([
      '4111 1111 1111 1111',
      '5555-5555-5555-4444',
      '378282246310005',
    ])
    for (const miss of ['4111 1111 1111 1112', '411111111111', '41111111111111111111111', 'x4111111111111111', '1234 5678 9012 3456', '4111  1111 1111 1111'])
      expect(only(miss, 'card'), miss).toEqual([])
  })

  it('IBANs only when mod-97 passes, compact or in groups of four, ending before a following word', () => {
    expect(only('IBAN DE89 3704 0044 0532 0130 00 IBAN, GB82WEST12345698765432; NL91 ABNA 0417 1643 00', 'iban')).toEqual([
      'DE89 3704 0044 0532 0130 00',
      'GB82WEST12345698765432',
      'NL91 ABNA 0417 1643 00',
    ])
    for (const miss of ['DE89 3704 0044 0532 0130 01', 'XDE89370400440532013000', 'de89370400440532013000', 'DE89 3704'])
      expect(only(miss, 'iban'), miss).toEqual([])
  })

  it('one match per place: an IBAN is not also a phone, a card is not also a phone', () => {
    expect(findPii('DE89 3704 0044 0532 0130 00').map((m) => m.kind)).toEqual(['iban'])
    expect(findPii('4111-1111-1111-1111').map((m) => m.kind)).toEqual(['card'])
  })
})

describe('redactText', () => {
  it('replaces each kind with its placeholder and counts them, never keeping a value', () => {
    const { text, counts } = redactText('Jane (jane@example.com, +44 20 7946 0958) paid with 4111 1111 1111 1111 from DE89370400440532013000.')
    expect(text).toBe('Jane ([REDACTED_EMAIL], [REDACTED_PHONE]) paid with [REDACTED_CARD] from [REDACTED_IBAN].')
    expect(counts).toEqual({ email: 1, phone: 1, card: 1, iban: 1 })
  })

  it('redacts only the kinds asked for', () => {
    const { text, counts } = redactText('jane@example.com +44 20 7946 0958', ['phone'])
    expect(text).toBe('jane@example.com [REDACTED_PHONE]')
    expect(counts).toEqual({ email: 0, phone: 1, card: 0, iban: 0 })
  })

  it('leaves a text without personal data as it is', () => {
    const text = 'The meeting is on 2024-01-15 at 10:30 in room 12; ticket 1700000000123.'
    expect(redactText(text)).toEqual({ text, counts: { email: 0, phone: 0, card: 0, iban: 0 } })
  })
})

// Texts whose matches sit at the start, the end, next to each other and past STREAM_HOLD characters.
const TEXTS = [
  'jane@example.com',
  'Call +44 20 7946 0958 or 020 7946 0958 now',
  'x 4111 1111 1111 1111 exp 12/25 and 4111 1111 1111 1112 then DE89 3704 0044 0532 0130 00 IBAN',
  `${'lorem ipsum '.repeat(15)}reach me at first.last@mail.example.org, 415-555-2671; ${'z'.repeat(140)} GB82WEST12345698765432`,
  'ids 1700000000123 12345678901 and 2024-01-15 10:30, no data',
  'a@b.de+33 1 23 45 67 89,5555555555554444.',
]

describe('createStreamRedactor', () => {
  const streamed = (chunks: string[], kinds?: PiiKind[]) => {
    const redactor = createStreamRedactor(kinds)
    const out = chunks.map((c) => redactor.write(c)).join('') + redactor.end()
    return { text: out, counts: redactor.counts() }
  }

  it('gives what redactText gives, for every split of each text into two chunks and into three', () => {
    for (const text of TEXTS) {
      const whole = redactText(text)
      for (let i = 0; i <= text.length; i++) expect(streamed([text.slice(0, i), text.slice(i)]), `${text} at ${i}`).toEqual(whole)
      for (let i = 0; i <= text.length; i += 3) {
        for (let j = i; j <= text.length; j += 5) expect(streamed([text.slice(0, i), text.slice(i, j), text.slice(j)]), `${text} at ${i}, ${j}`).toEqual(whole)
      }
    }
  })

  it('gives what redactText gives, one character at a time and in chunks of random sizes', () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    for (const text of TEXTS) {
      const whole = redactText(text)
      expect(streamed([...text])).toEqual(whole)
      for (let round = 0; round < 50; round++) {
        const chunks: string[] = []
        for (let i = 0; i < text.length; ) {
          const size = Math.floor(random() * 12)
          chunks.push(text.slice(i, i + size))
          i += size
        }
        expect(streamed(chunks, ['email', 'card']), text).toEqual(redactText(text, ['email', 'card']))
      }
    }
  })

  it('holds back at most STREAM_HOLD characters and emits the rest at once', () => {
    const redactor = createStreamRedactor()
    const text = 'no personal data here. '.repeat(20)
    const out = redactor.write(text)
    expect(out).toBe(text.slice(0, text.length - STREAM_HOLD))
    expect(redactor.write('')).toBe('')
    expect(redactor.end()).toBe(text.slice(text.length - STREAM_HOLD))
  })

  it('a match settled before the hold is emitted redacted at once', () => {
    const redactor = createStreamRedactor(PII_KINDS)
    const out = redactor.write(`mail jane@example.com ${'.'.repeat(STREAM_HOLD)}`)
    expect(out).toBe('mail [REDACTED_EMAIL] ')
    expect(redactor.counts().email).toBe(1)
  })
})
