import { randomToken, sha256Hex } from '../crypto/keys'
import type { LimitReset } from './account-types'
import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/** The PKCE methods (RFC 7636), as an authorization code records its challenge's (src/auth/pkce.ts checks it). */
export type ChallengeMethod = 'S256' | 'plain'

/** An authorization code as stored: bound to the user, the challenge and its method, and the callback origin. */
export interface CodeRecord {
  user_id: string
  challenge: string
  method: ChallengeMethod
  callback_origin: string
  created_at: string
  expires_at: number
  /** Set when a key created the code (docs/keys.md): the key the exchanged key is minted under, and what was asked of it. */
  minted?: MintTerms
  /** The credit limit (EUR decimal string) the person approved in the browser flow, when the app asked for one. */
  limit?: string
}

/** What a key asked of the key it mints: its parent, and optional limit, expiry and label. */
export interface MintTerms {
  parent_hash: string
  /** Credit limit asked for, EUR decimal string. */
  limit?: string
  /** Expiry asked for, epoch ms. */
  expires_at?: number
  label?: string
  /** The asked limit starts over each UTC day, week or month. */
  limit_reset?: LimitReset
}

/** Authorization codes (docs/pkce.md#codes): 32 random bytes, stored by hash, valid for a while, usable once. */
export function createCodesStore(options: { kv: Kv; atomic: AtomicOps; now: () => number; ttlSeconds: number }) {
  const { kv, atomic, now } = options
  const key = (code: string) => kv.key('codes', sha256Hex(code))
  return {
    /** Creates a code; the code itself is returned once and only its hash is kept. */
    async create(input: {
      userId: string
      challenge: string
      method: ChallengeMethod
      callbackOrigin: string
      minted?: MintTerms
      limit?: string
    }): Promise<{ code: string; created_at: string }> {
      const code = randomToken(32)
      const created = now()
      const record: CodeRecord = {
        user_id: input.userId,
        challenge: input.challenge,
        method: input.method,
        callback_origin: input.callbackOrigin,
        created_at: new Date(created).toISOString(),
        expires_at: created + options.ttlSeconds * 1000,
        ...(input.minted ? { minted: input.minted } : {}),
        ...(input.limit ? { limit: input.limit } : {}),
      }
      // Storage with expiry (Redis) drops the code by itself; elsewhere the sweep removes it (docs/retention.md).
      await kv.storage.setItem(key(code), record as never, { ttl: Math.ceil(options.ttlSeconds) })
      return { code, created_at: record.created_at }
    },
    /** Takes a code out (of concurrent takers only one gets it); null when unknown, used or expired. */
    async take(code: string): Promise<CodeRecord | null> {
      const record = await atomic.take<CodeRecord>(key(code))
      return record && record.expires_at > now() ? record : null
    },
  }
}

/** The codes store's operations. */
export type CodesStore = ReturnType<typeof createCodesStore>
