import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/** An answer to a consent request of the browser flow: when, and when the request it answered expires. */
export interface ConsentAnswer {
  at: string
  expires_at: number
}

/** Answers to consent requests (docs/pkce.md), `consent-used:<jti>`: each request is answered once, then swept once expired. */
export function createConsentsStore({ kv, atomic }: { kv: Kv; atomic: AtomicOps }) {
  return {
    /** Records the answer to consent request `jti` if it has none yet; false when it was already answered. */
    answerOnce: (jti: string, answer: ConsentAnswer): Promise<boolean> => atomic.setIfAbsent(kv.key('consent-used', jti), answer),
  }
}

/** The consents store's operations. */
export type ConsentsStore = ReturnType<typeof createConsentsStore>
