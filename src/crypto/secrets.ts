import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose'
import { sha256Hex } from './hash'
import { deriveKey } from './tokens'

/** Encrypts and decrypts stored secrets (BYOK keys) as JWE (dir, A256GCM) under keys derived from the gateway's secrets. */
export interface SecretBox {
  /** Encrypts with the current key; the JWE header names the key (kid). */
  seal(plaintext: string): Promise<string>
  /** Decrypts a value sealed under the current or a previous secret. */
  open(sealed: string): Promise<string>
  /** The id of the current key. */
  readonly kid: string
}

const kidOf = (secret: string) => `k${sha256Hex(`model-gateway kid:${secret}`).slice(0, 12)}`

/** A SecretBox over `secret` (for new records) and `previous` secrets (still readable, so the secret can be rotated). */
export function createSecretBox(secret: string, previous: string[] = []): SecretBox {
  const keys = new Map<string, Uint8Array>()
  for (const s of [secret, ...previous]) keys.set(kidOf(s), deriveKey(s, 'byok-secrets'))
  const kid = kidOf(secret)
  const current = keys.get(kid)!
  const encoder = new TextEncoder()
  return {
    kid,
    seal: (plaintext) => new CompactEncrypt(encoder.encode(plaintext)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid }).encrypt(current),
    async open(sealed) {
      const header = decodeProtectedHeader(sealed)
      const key = typeof header.kid === 'string' ? keys.get(header.kid) : undefined
      if (!key) throw new Error(`no key to open a secret sealed under ${String(header.kid)}: was that secret removed from previousSecrets?`)
      const { plaintext } = await compactDecrypt(sealed, key)
      return new TextDecoder().decode(plaintext)
    },
  }
}
