import { idBytes } from '../crypto/id-bytes'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A new generation id (every capability's, docs/capabilities.md): `gen-` plus the time and 20 random characters. */
export function newGenerationId(now: number): string {
  const bytes = idBytes(20)
  let random = ''
  for (const byte of bytes) random += ALPHABET[byte % ALPHABET.length]
  return `gen-${Math.floor(now / 1000)}-${random}`
}
