import { randomBytes, toHex } from './hash'

// One CPU-costly CSPRNG call per 4 KiB instead of one per id. For identifiers only (request and generation ids),
// never for keys or secrets: the bytes are handed out from a shared buffer.
const POOL_SIZE = 4096
let pool: Uint8Array = new Uint8Array(0)
let offset = 0

/** `size` (≤ 4096) random bytes for an identifier, drawn from a pooled CSPRNG buffer; read them before the next call. */
export function idBytes(size: number): Uint8Array {
  if (offset + size > pool.length) {
    pool = randomBytes(POOL_SIZE)
    offset = 0
  }
  const bytes = pool.subarray(offset, offset + size)
  offset += size
  return bytes
}

/** `size` pooled random bytes for an identifier, as lowercase hex (2 × `size` characters). */
export function idHex(size: number): string {
  return toHex(idBytes(size))
}
