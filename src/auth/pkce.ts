import { sha256, toBase64Url } from '../crypto/hash'
import { safeEqual } from '../crypto/keys'
import type { ChallengeMethod } from '../stores/codes'

/** True when the verifier matches the challenge: base64url(SHA-256(verifier)) for S256, the verifier itself for plain; constant time. */
export function verifierMatches(verifier: string, challenge: string, method: ChallengeMethod): boolean {
  const derived = method === 'S256' ? toBase64Url(sha256(verifier)) : verifier
  return safeEqual(derived, challenge)
}
