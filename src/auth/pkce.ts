import { createHash } from 'node:crypto'
import { safeEqual } from '../crypto/keys'
import type { ChallengeMethod } from '../stores/codes'

/** True when the verifier matches the challenge: base64url(SHA-256(verifier)) for S256, the verifier itself for plain; constant time. */
export function verifierMatches(verifier: string, challenge: string, method: ChallengeMethod): boolean {
  const derived = method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier
  return safeEqual(derived, challenge)
}
