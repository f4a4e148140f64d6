import { hkdf } from '@noble/hashes/hkdf'
import { sha1 as nobleSha1 } from '@noble/hashes/legacy'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2'
import { nodeBuiltin } from '../runtime/node-builtin'

const node = nodeBuiltin('node:crypto')
const encoder = new TextEncoder()
const bytesOf = (value: string | Uint8Array) => (typeof value === 'string' ? encoder.encode(value) : value)

/**
 * The SHA-256 of a string (UTF-8) or bytes, synchronously: node:crypto where the runtime has it, else @noble/hashes
 * (Web Crypto's digest is asynchronous; docs/edge.md#what-the-edge-entry-leaves-out).
 */
export function sha256(value: string | Uint8Array): Uint8Array {
  if (node) return new Uint8Array(node.createHash('sha256').update(value).digest())
  return nobleSha256(bytesOf(value))
}

/** The lowercase hex SHA-256 of a string (UTF-8) or bytes. */
export function sha256Hex(value: string | Uint8Array): string {
  // Node's one-shot hash (20.12+) where there is one: no Hash object per call, on every request's key.
  if (node) return typeof node.hash === 'function' ? node.hash('sha256', value, 'hex') : node.createHash('sha256').update(value).digest('hex')
  return toHex(nobleSha256(bytesOf(value)))
}

/** The lowercase hex SHA-1 of a string (UTF-8): what Redis names a Lua script by (EVALSHA), nothing secret. */
export function sha1Hex(value: string): string {
  if (node) return node.createHash('sha1').update(value).digest('hex')
  return toHex(nobleSha1(bytesOf(value)))
}

/** HKDF-SHA256 of `secret` with `salt` and `info`, `length` bytes long. */
export function hkdfSha256(secret: string, salt: string, info: string, length: number): Uint8Array {
  if (node) return new Uint8Array(node.hkdfSync('sha256', secret, salt, info, length))
  return hkdf(nobleSha256, encoder.encode(secret), encoder.encode(salt), encoder.encode(info), length)
}

/** `size` bytes from the runtime's CSPRNG (Web Crypto's getRandomValues, present in Node, Bun, Deno and workerd). */
export function randomBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size)
  // getRandomValues fills at most 65536 bytes per call.
  for (let at = 0; at < size; at += 65536) crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65536)))
  return bytes
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/** Bytes as lowercase hex. */
export function toHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += HEX[byte]
  return hex
}

/** Bytes as unpadded base64url. */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
