import type { ApiKeyRecord } from './account-types'
import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

// Far enough in the future that every creation time (epoch ms) subtracted from it keeps 14 digits.
const LATEST_MS = 99_999_999_999_999
/** How often an entry is written again because its record changed while it was written. */
const SYNC_ROUNDS = 16

/** Which of an org's keys a page lists: the enabled ones (GET /keys), or every one not deleted (`include_disabled`). */
export type KeyListing = 'enabled' | 'all'

/**
 * The name of a key's entry: newest first when names are sorted as text, then by hash (the order of GET /keys);
 * the hash is its last 64 characters.
 */
export const entryName = (record: Pick<ApiKeyRecord, 'created_at' | 'hash'>): string =>
  `${String(LATEST_MS - Date.parse(record.created_at)).padStart(14, '0')}-${record.hash}`

/**
 * The index GET /keys pages from (docs/keys.md#the-key-routes), so that a page reads only its own records: per org,
 * one entry per ordinary key not deleted (`key-list:<org>:all:<entry>`) and one per key that is also neither disabled
 * nor revoked (`key-list:<org>:enabled:<entry>`). Entries are names only; a page lists the names, sorts them, and
 * reads the records of its slice.
 */
export function createKeyList({ kv, atomic, recordKey }: { kv: Kv; atomic: AtomicOps; recordKey: (hash: string) => string }) {
  const place = async (record: ApiKeyRecord) => {
    const name = entryName(record)
    const listed = !record.management && !record.deleted_at
    const enabled = listed && !record.revoked && !record.disabled
    await Promise.all([
      listed ? kv.set({ hash: record.hash }, 'key-list', record.org_id, 'all', name) : kv.remove('key-list', record.org_id, 'all', name),
      enabled ? kv.set({ hash: record.hash }, 'key-list', record.org_id, 'enabled', name) : kv.remove('key-list', record.org_id, 'enabled', name),
    ])
  }

  // A key's entries, both of them, gone (its record was removed: docs/retention.md#revoked-and-deleted-keys).
  const unplace = async (record: Pick<ApiKeyRecord, 'org_id' | 'created_at' | 'hash'>) => {
    const name = entryName(record)
    await Promise.all([kv.remove('key-list', record.org_id, 'all', name), kv.remove('key-list', record.org_id, 'enabled', name)])
  }

  // Keys issued before the index existed are indexed once, on the first listing (one pass over every key).
  let indexed = false
  async function indexAll(): Promise<void> {
    if (indexed || (await kv.get('key-list-indexed'))) {
      indexed = true
      return
    }
    for (const hash of await kv.list('keys')) await sync(hash)
    await kv.set({ at: new Date().toISOString() }, 'key-list-indexed')
    indexed = true
  }

  /**
   * Puts a key's entries where its record says, after any change to it. The record is read again afterwards: when it
   * changed meanwhile (its `rev`), the entries are placed again, so that concurrent changes on any instances leave
   * them as the last change made them; when the record was removed meanwhile (the retention sweep), the entries just
   * placed are removed too, so that none outlives its key.
   */
  async function sync(hash: string): Promise<void> {
    let record = await atomic.read<ApiKeyRecord>(recordKey(hash))
    for (let round = 0; record && round < SYNC_ROUNDS; round++) {
      await place(record)
      const after: ApiKeyRecord | null = await atomic.read<ApiKeyRecord>(recordKey(hash))
      if (!after) return unplace(record)
      if ((after.rev ?? 0) === (record.rev ?? 0)) return
      record = after
    }
  }

  return {
    sync,
    /** Removes a key's entries (its record is being removed); removing them twice is harmless. */
    remove: unplace,
    /** The hashes of one page of an org's keys, newest first: `limit` at most from `offset`. */
    async page(orgId: string, listing: KeyListing, offset: number, limit: number): Promise<string[]> {
      await indexAll()
      const names = (await kv.list('key-list', orgId, listing)).sort()
      return names.slice(offset, offset + limit).map((name) => name.slice(-64))
    },
  }
}

/** The key list index's operations. */
export type KeyList = ReturnType<typeof createKeyList>
