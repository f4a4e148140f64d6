/** Reads a whole SSE response: the `data:` payloads (JSON parsed, `[DONE]` kept as a string) and the comment lines. */
export async function readSse(res: Response): Promise<{ events: any[]; comments: string[]; raw: string }> {
  const raw = await res.text()
  const events: any[] = []
  const comments: string[] = []
  for (const block of raw.split('\n\n')) {
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line)
      else if (line.startsWith('data: ')) {
        const data = line.slice(6)
        events.push(data === '[DONE]' ? data : JSON.parse(data))
      }
    }
  }
  return { events, comments, raw }
}

/** Exact decimal arithmetic for expected costs: a decimal string times an integer, summed, in 10^-12 units. */
export const units = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.')
  return BigInt(whole) * 10n ** 12n + BigInt(fraction.padEnd(12, '0').slice(0, 12) || '0')
}

/** Formats 10^-12 units as a plain decimal string. */
export const decimalText = (value: bigint): string => {
  const whole = value / 10n ** 12n
  const fraction = (value % 10n ** 12n).toString().padStart(12, '0').replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : `${whole}`
}

/** Rounds a product given at 10^-(12+extra) scale half-up to 10^-12 units. */
export const roundUnits = (value: bigint, extraDigits: number): bigint => {
  const divisor = 10n ** BigInt(extraDigits)
  return (value + divisor / 2n) / divisor
}

/**
 * The exact cost of `input` prompt and `output` completion tokens at per-token prices (decimal strings): in the
 * pricing currency, and in EUR at 0.86 per unit (rounded half-up once, to 12 digits), as the tests' gateways convert.
 */
export function tokenCost(prices: { prompt: string; completion: string }, input: number, output: number): { usd: string; eur: string } {
  const usd = BigInt(input) * units(prices.prompt) + BigInt(output) * units(prices.completion)
  return { usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) }
}
