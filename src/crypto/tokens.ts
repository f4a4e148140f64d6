import { jwtVerify, SignJWT, type JWTPayload } from 'jose'
import { hkdfSha256 } from './hash'

/** A 256-bit key for one purpose, derived from the gateway's secret with HKDF-SHA256. */
export function deriveKey(secret: string, purpose: string): Uint8Array {
  return hkdfSha256(secret, 'model-gateway', purpose, 32)
}

/** Signs a short-lived token (JWT, HS256) carrying `claims`. */
export async function signToken(key: Uint8Array, claims: JWTPayload, options: { nowMs: number; ttlSeconds: number; audience: string }): Promise<string> {
  const now = Math.floor(options.nowMs / 1000)
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt(now)
    .setExpirationTime(now + options.ttlSeconds)
    .setAudience(options.audience)
    .sign(key)
}

/** Verifies a token signed by signToken; null when forged, tampered, expired or meant for another purpose. */
export async function verifyToken<T extends JWTPayload>(key: Uint8Array, token: string, options: { nowMs: number; audience: string }): Promise<T | null> {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], audience: options.audience, currentDate: new Date(options.nowMs) })
    return payload as T
  } catch {
    return null
  }
}
