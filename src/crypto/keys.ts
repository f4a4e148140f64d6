import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'

/** Default API key prefix (decisions.md §3). */
export const DEFAULT_KEY_PREFIX = 'sk-service-v1-'

/** A new API key: the prefix followed by 64 lowercase hex characters (32 CSPRNG bytes). */
export function generateApiKey(prefix: string = DEFAULT_KEY_PREFIX): string {
  return prefix + randomBytes(32).toString('hex')
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
  return createHash('sha256').update(value).digest('hex')
}

/** A random UUID (v4). */
export function newId(): string {
  return randomUUID()
}

/** A random URL-safe token of `bytes` random bytes. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/** Compares two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/** Shows the start and the last four characters of a secret, never more ("sk-…abcd"). */
export function maskSecret(secret: string): string {
  const head = /^[a-z]{2,4}-/i.exec(secret)?.[0] ?? ''
  return `${head}…${secret.slice(-4)}`
}
