import { randomBytes, sha256Hex as hashHex, toBase64Url, toHex } from './hash'

/** Default API key prefix (docs/keys.md#the-key-itself-format-storage-expiry). */
export const DEFAULT_KEY_PREFIX = 'sk-service-v1-'

/** A new API key: the prefix followed by 64 lowercase hex characters (32 CSPRNG bytes). */
export function generateApiKey(prefix: string = DEFAULT_KEY_PREFIX): string {
  return prefix + toHex(randomBytes(32))
}

/** True when a string has the shape of a key issued with this prefix. */
export function isWellFormedKey(key: string, prefix: string = DEFAULT_KEY_PREFIX): boolean {
  if (key.length !== prefix.length + 64 || !key.startsWith(prefix)) return false
  for (let i = prefix.length; i < key.length; i++) {
    const c = key.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false
  }
  return true
}

/** The lowercase hex SHA-256 of a string: how keys are stored and what `allowed_api_key_hashes` holds. */
export function sha256Hex(value: string): string {
  return hashHex(value)
}

/** A random UUID (v4). */
export function newId(): string {
  return crypto.randomUUID()
}

/** A random URL-safe token of `bytes` random bytes. */
export function randomToken(bytes = 32): string {
  return toBase64Url(randomBytes(bytes))
}

/** Compares two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const encoder = new TextEncoder()
  const left = encoder.encode(a)
  const right = encoder.encode(b)
  if (left.length !== right.length) return false
  let differ = 0
  for (let i = 0; i < left.length; i++) differ |= left[i] ^ right[i]
  return differ === 0
}

// Vendor prefixes worth keeping in a hint, longest first ("sk-ant-", "sk-proj-", then "sk-"): one or two short
// letter-only segments, each followed by a dash.
const PREFIX_RE = /^[a-z]{2,4}-(?:[a-z]{2,4}-)?/i

/**
 * A hint of a secret that reveals at most half of it (the BYOK default label, docs/byok.md#credentials): the last four
 * characters only from 16 characters on, and a vendor prefix ("sk-", "sk-ant-") only while prefix and tail together
 * stay within that half. "sk-proj-…wxyz" for a long key, "sk-…" or "…" for a short one.
 */
export function maskSecret(secret: string): string {
  const budget = Math.floor(secret.length / 2)
  const tail = secret.length >= 16 ? secret.slice(-4) : ''
  const full = PREFIX_RE.exec(secret)?.[0] ?? ''
  const first = /^[^-]*-/.exec(full)?.[0] ?? ''
  const head = [full, first].find((prefix) => prefix.length + tail.length <= budget) ?? ''
  return `${head}…${tail}`
}
