import type { ApiKeyRecord } from './account-types'
import type { AtomicOps } from './engine-types'
import { keyHoldsKey } from './budgets'
import { keyCounterKeys } from './key-counters'
import type { KeyList } from './key-list'
import type { Kv } from './kv'
import { createRecords } from './records'

/** The prefix of the index of revoked (and deleted) keys by the time of their revocation: `revoked-keys:<entry>`. */
export const REVOKED_KEYS_PREFIX = 'revoked-keys'
/** Marks that keys revoked before the index existed were indexed (once). */
const INDEXED = 'revoked-keys-indexed'
/** Records read, or keys revoked, at once. */
const AT_ONCE = 16

/** What an entry of the index keeps of its key: enough to find the records that name it once its own record is gone. */
interface RevokedNote {
  hash: string
  org_id: string
  user_id: string
  created_at: string
  /** The key that minted it. */
  minted_by?: string
}

/** When the key of a revoked keys' index entry (`<15-digit epoch ms>-<hash>`) was revoked, or undefined for another name. */
export function revokedEntryTime(name: string): number | undefined {
  const match = /^(\d{15})-[0-9a-f]{64}$/.exec(name)
  return match ? Number(match[1]) : undefined
}

/** What the revoked keys' index needs of the accounts store. */
export interface RevokedKeysOptions {
  kv: Kv
  atomic: AtomicOps
  now: () => number
  recordKey: (hash: string) => string
  keyList: KeyList
  /** Revokes a key as the accounts store does (out of its org's count, with the keys it minted, into this index). */
  revoke: (hash: string) => Promise<unknown>
}

/**
 * Revoked and deleted keys, and their removal (docs/retention.md#revoked-and-deleted-keys): an index entry per revoked
 * key named by the time of its revocation, so that the retention sweep finds the keys due from the entries' names
 * alone, and the removal of a due key's record with every record kept about it (its list entries, minted-by entries,
 * last use, spending counters, holds) and its entry. A key whose record is gone is unknown: it answers 401, and so does
 * every key it minted (a key above it is missing).
 */
export function createRevokedKeys({ kv, atomic, now, recordKey, keyList, revoke }: RevokedKeysOptions) {
  const records = createRecords(kv.storage)

  // Its entry's name: by its revocation (a deleted key was revoked when it was deleted, or before).
  const nameOf = (record: ApiKeyRecord) => {
    const at = Date.parse(record.revoked_at ?? record.deleted_at ?? '')
    return `${String(Number.isFinite(at) ? at : now()).padStart(15, '0')}-${record.hash}`
  }

  /** Puts a revoked key in the index (after every change to a revoked key: writing its entry again is harmless). */
  async function note(record: ApiKeyRecord): Promise<void> {
    const parent = record.ancestors?.[0]?.hash
    const entry: RevokedNote = {
      hash: record.hash,
      org_id: record.org_id,
      user_id: record.user_id,
      created_at: record.created_at,
      ...(parent ? { minted_by: parent } : {}),
    }
    await kv.set(entry, REVOKED_KEYS_PREFIX, nameOf(record))
  }

  // Keys revoked before the index existed are indexed once, before the first sweep looks at it (one pass over every key).
  let indexed = false
  async function indexOnce(): Promise<void> {
    if (indexed || (await kv.get(INDEXED))) {
      indexed = true
      return
    }
    const hashes = await kv.list('keys')
    for (let i = 0; i < hashes.length; i += AT_ONCE) {
      const batch = await Promise.all(hashes.slice(i, i + AT_ONCE).map((hash) => atomic.read<ApiKeyRecord>(recordKey(hash))))
      await Promise.all(batch.map((record) => (record?.revoked ? note(record) : undefined)))
    }
    await kv.set({ at: new Date(now()).toISOString() }, INDEXED)
    indexed = true
  }

  /**
   * Removes the key of an index entry that is due, with every record kept about it, then the entry; true when this
   * call removed the key's record (of sweeps running at once on several instances, one does). Removing a key twice is
   * harmless. Keys it minted that are not revoked yet (the revocation that should have reached them failed) are revoked
   * first, so that each leaves its org's count of live keys once and is removed in its turn. Throws (the entry stays, a
   * later sweep tries again) when storage fails.
   */
  async function remove(name: string): Promise<boolean> {
    const hash = name.slice(-64)
    const [noted, record] = await Promise.all([kv.get<RevokedNote>(REVOKED_KEYS_PREFIX, name), atomic.read<ApiKeyRecord>(recordKey(hash))])
    if (record && !record.revoked) {
      // Not revoked (never happens: a revocation is for good): the key stays; only the entry goes.
      await kv.remove(REVOKED_KEYS_PREFIX, name)
      return false
    }
    const children = await kv.list('minted-by', hash)
    for (let i = 0; i < children.length; i += AT_ONCE) {
      await Promise.all(
        children.slice(i, i + AT_ONCE).map(async (child) => {
          const minted = await atomic.read<ApiKeyRecord>(recordKey(child))
          if (minted && !minted.revoked) await revoke(child)
        }),
      )
    }
    // The record first, in one atomic step (of concurrent removals one takes it); then what names it.
    const taken = record ? await atomic.take<ApiKeyRecord>(recordKey(hash)) : null
    const about = taken ?? record ?? noted
    const parent = about && ('ancestors' in about ? about.ancestors?.[0]?.hash : (about as RevokedNote).minted_by)
    await Promise.all([
      kv.remove('key-used', hash),
      ...[...keyCounterKeys(kv, hash), keyHoldsKey(kv, hash)].map((key) => records.remove(key)),
      ...children.map((child) => kv.remove('minted-by', hash, child)),
      ...(about ? [kv.remove('user-keys', about.user_id, hash), kv.remove('org-keys', about.org_id, hash), keyList.remove({ ...about, hash })] : []),
      parent ? kv.remove('minted-by', parent, hash) : undefined,
    ])
    await kv.remove(REVOKED_KEYS_PREFIX, name)
    return taken !== null
  }

  return { note, indexOnce, remove }
}

/** The revoked keys' index operations. */
export type RevokedKeys = ReturnType<typeof createRevokedKeys>
