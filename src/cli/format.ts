/** Plain-text output helpers: aligned tables and exact prices. */

/** Rows as aligned columns (two spaces apart), the first row being the header. */
export function table(rows: string[][]): string {
  const widths: number[] = []
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length)
    })
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** A per-token price as a price per million tokens, exactly (the decimal point moves six places): "0.00000015" → "0.15". */
export function perMillion(price: string): string {
  const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(price.trim())
  if (!match) return price
  const [, sign, whole, fraction = ''] = match
  const padded = fraction.padEnd(6, '0')
  const integer = `${whole}${padded.slice(0, 6)}`.replace(/^0+(?=\d)/, '') || '0'
  const rest = padded.slice(6).replace(/0+$/, '')
  const text = rest ? `${integer}.${rest}` : integer
  return text === '0' ? '0' : `${sign}${text}`
}

/** An amount with its currency: `$0.15` for USD, `0.15 EUR` otherwise. */
export const money = (amount: string, currency = 'USD'): string => (currency === 'USD' ? `$${amount}` : `${amount} ${currency}`)

/** A whole number with thousands separators: 128000 → "128,000"; 0 or missing → "-". */
export const count = (value: number | null | undefined): string => (value ? value.toLocaleString('en-US') : '-')
