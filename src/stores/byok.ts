import type { SecretBox } from '../crypto/secrets'
import { maskSecret, newId } from '../crypto/keys'
import { GatewayError, notFound } from '../errors'
import type { AtomicOps } from './engine-types'
import { createListedCache, type ListedCacheLimits } from './byok-cache'
import type { Kv } from './kv'

/**
 * A BYOK credential as the API shows it (docs/byok.md#credentials, with the fields OpenRouter's SDK reads): never its
 * secret.
 */
export interface Credential {
  id: string
  provider: string
  name: string
  label: string
  allowed_api_key_hashes: string[]
  allowed_models: string[]
  /** Users of the org who may use it (empty: all of them). */
  allowed_user_ids: string[]
  always_use: boolean
  /** OpenRouter's name for `always_use`: the service's own key is never used for the models it applies to. */
  is_required: boolean
  /** The service's own key for this provider is never used, for any model. */
  is_byok_only: boolean
  /** The customer's declaration that the provider account keeps no data (null: none made). */
  declared_zdr: boolean | null
  is_fallback: boolean
  disabled: boolean
  sort_order: number
  /** The org's id: the gateway's one workspace of an org. */
  workspace_id: string
  created_at: string
  last_used: string | null
}

/**
 * A credential as stored: its org, and its secret sealed (JWE). Records written before a field existed lack it:
 * `allowed_user_ids` then reads as empty, `is_byok_only` as false, `declared_zdr` as null.
 */
export interface CredentialRecord
  extends Omit<Credential, 'last_used' | 'is_required' | 'workspace_id' | 'allowed_user_ids' | 'is_byok_only' | 'declared_zdr'> {
  org_id: string
  sealed_key: string
  allowed_user_ids?: string[]
  is_byok_only?: boolean
  declared_zdr?: boolean | null
}

/** Fields a create or update may set (docs/byok.md#credentials; `is_required` is set as `always_use`). */
export interface CredentialInput {
  key?: string
  name?: string
  label?: string
  allowed_api_key_hashes?: string[]
  allowed_models?: string[]
  allowed_user_ids?: string[]
  always_use?: boolean
  is_byok_only?: boolean
  declared_zdr?: boolean | null
  is_fallback?: boolean
  disabled?: boolean
  sort_order?: number
}

const byOrder = (a: Pick<Credential, 'sort_order' | 'created_at' | 'id'>, b: Pick<Credential, 'sort_order' | 'created_at' | 'id'>) =>
  a.sort_order - b.sort_order || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)

/**
 * What an org has: the ids of its credentials and a version that every create, update and delete changes (a random
 * id, so an index deleted and made again never repeats one). One record, changed only atomically: the one source of
 * truth for which credentials exist and how many (docs/byok.md).
 */
interface OrgIndex {
  version: string
  ids: string[]
}

/** Options of the BYOK store. */
export interface ByokStoreOptions {
  kv: Kv
  atomic: AtomicOps
  box: SecretBox
  now: () => number
  /** Credentials an org may store at most. */
  maxCredentials: number
  /** Bounds of the per-process cache of listed credentials. */
  cache?: ListedCacheLimits
}

/** Customers' provider credentials over unstorage, secrets sealed, scoped to their org; every change is atomic (docs/byok.md). */
export function createByokStore(options: ByokStoreOptions) {
  const { kv, atomic, box, now, maxCredentials } = options
  const indexKey = (orgId: string) => kv.key('byok-index', orgId)
  const recordKey = (orgId: string, id: string) => kv.key('byok', orgId, id.toLowerCase())
  // A process keeps the records it read for an index version and reads them again only when the version changes
  // (by any instance, since the index is in the shared storage): routing asks on every request that could use BYOK.
  const listed = createListedCache<CredentialRecord>(options.cache)

  /** Gives the index a new version, so that every process reads the org's records again. */
  const touchIndex = (orgId: string) => atomic.update<OrgIndex>(indexKey(orgId), (index) => (index ? { ...index, version: newId() } : undefined))

  /** Removes ids from the index (null once it is empty): a delete, or the leftovers of one that stopped half-way. */
  const unindex = (orgId: string, ids: string[]) =>
    atomic.update<OrgIndex>(indexKey(orgId), (index) => {
      if (!index || !ids.some((id) => index.ids.includes(id))) return undefined
      const rest = index.ids.filter((id) => !ids.includes(id))
      return rest.length > 0 ? { version: newId(), ids: rest } : null
    })

  const view = async (record: CredentialRecord): Promise<Credential> => {
    const { org_id: orgId, sealed_key: _sealed, allowed_user_ids: users, is_byok_only: byokOnly, declared_zdr: zdr, ...rest } = record
    const used = await kv.get<{ at: string }>('byok-used', record.id)
    return {
      ...rest,
      allowed_user_ids: users ?? [],
      is_required: rest.always_use,
      is_byok_only: byokOnly ?? false,
      declared_zdr: zdr ?? null,
      workspace_id: orgId,
      last_used: used?.at ?? null,
    }
  }

  async function records(orgId: string): Promise<CredentialRecord[]> {
    // One read answers an org without credentials (most of them) and, with the cache, one with some.
    const index = await atomic.read<OrgIndex>(indexKey(orgId))
    if (!index || index.ids.length === 0) return []
    const cached = listed.get(orgId, index.version)
    if (cached) return cached
    const found = await Promise.all(index.ids.map((id) => atomic.read<CredentialRecord>(recordKey(orgId, id))))
    const records = found.filter((r): r is CredentialRecord => r !== null)
    // A record is written before its id is indexed and taken before it is unindexed: an indexed id without a
    // record is a delete under way or one that stopped between its two steps. Drop it; cache the next version.
    const missing = index.ids.filter((_, i) => found[i] === null)
    if (missing.length > 0) await unindex(orgId, missing).catch(() => undefined)
    else listed.set(orgId, index.version, records)
    return records
  }

  async function requireRecord(orgId: string, id: string): Promise<CredentialRecord> {
    // The key includes the org: another org's id is simply not found (never "forbidden").
    const record = await atomic.read<CredentialRecord>(recordKey(orgId, id))
    if (!record) throw notFound('Credential not found')
    return record
  }

  return {
    /** The org's credentials, sorted by sort_order then created_at, filtered and paged. */
    async list(orgId: string, query: { offset: number; limit: number; provider?: string }): Promise<{ data: Credential[]; total_count: number }> {
      const all = (await Promise.all((await records(orgId)).map(view))).filter((c) => !query.provider || c.provider === query.provider).sort(byOrder)
      return { data: all.slice(query.offset, query.offset + query.limit), total_count: all.length }
    },

    /** Every stored record of the org, sorted (for routing). */
    records: async (orgId: string) => [...(await records(orgId))].sort(byOrder),

    /** Stores a credential with its secret sealed; 400 when the org already has `maxCredentials`. */
    async create(orgId: string, input: CredentialInput & { key: string; provider: string; providerName: string }): Promise<Credential> {
      const record: CredentialRecord = {
        id: newId(),
        org_id: orgId,
        provider: input.provider,
        name: input.name ?? input.providerName,
        label: input.label ?? maskSecret(input.key),
        allowed_api_key_hashes: (input.allowed_api_key_hashes ?? []).map((h) => h.toLowerCase()),
        allowed_models: input.allowed_models ?? [],
        allowed_user_ids: input.allowed_user_ids ?? [],
        always_use: input.always_use ?? false,
        is_byok_only: input.is_byok_only ?? false,
        declared_zdr: input.declared_zdr ?? null,
        is_fallback: input.is_fallback ?? false,
        disabled: input.disabled ?? false,
        sort_order: input.sort_order ?? 0,
        created_at: new Date(now()).toISOString(),
        sealed_key: await box.seal(input.key),
      }
      assertCombinable(record)
      // The record first (a new key nobody can name yet), then its id into the index, where the cap is checked in
      // the same atomic step; past the cap the record goes again.
      await kv.set(record, 'byok', orgId, record.id)
      try {
        await atomic.update<OrgIndex>(indexKey(orgId), (index) => {
          const ids = index?.ids ?? []
          if (ids.length >= maxCredentials) throw tooMany(maxCredentials)
          return { version: newId(), ids: [...ids, record.id] }
        })
      } catch (error) {
        await kv.remove('byok', orgId, record.id).catch(() => undefined)
        throw error
      }
      return view(record)
    },

    /** Reads one of the org's credentials (404 for another org's). */
    get: async (orgId: string, id: string): Promise<Credential> => view(await requireRecord(orgId, id)),

    /** Updates fields atomically; a new `key` rotates the secret in place (and resets the masked label unless one is given); 404 once deleted. */
    async update(orgId: string, id: string, patch: CredentialInput): Promise<Credential> {
      const { key, ...fields } = patch
      const sealed = key ? await box.seal(key) : undefined
      const next = await atomic.update<CredentialRecord>(recordKey(orgId, id), (record) =>
        // Absent (never created, or deleted meanwhile): leave it absent, never write it back.
        record
          ? assertCombinable({
              ...record,
              ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
              ...(fields.allowed_api_key_hashes ? { allowed_api_key_hashes: fields.allowed_api_key_hashes.map((h) => h.toLowerCase()) } : {}),
              ...(key && sealed ? { sealed_key: sealed, label: fields.label ?? maskSecret(key) } : {}),
            })
          : undefined,
      )
      if (!next) throw notFound('Credential not found')
      await touchIndex(orgId)
      return view(next)
    },

    /** Deletes one of the org's credentials: of concurrent deletes, exactly one succeeds, the others get 404. */
    async remove(orgId: string, id: string): Promise<{ deleted: true }> {
      const record = await atomic.take<CredentialRecord>(recordKey(orgId, id))
      if (!record) throw notFound('Credential not found')
      await unindex(orgId, [record.id])
      await kv.remove('byok-used', record.id)
      return { deleted: true }
    },

    /** The record of one of the org's credentials, with its secret still sealed. */
    record: requireRecord,

    /** The plain secret of a record (only ever sent upstream). */
    secretOf: (record: CredentialRecord): Promise<string> => box.open(record.sealed_key),

    /** Records that a credential served a request; never leaves a mark of a credential deleted meanwhile. */
    async touch(record: CredentialRecord): Promise<void> {
      await kv.set({ at: new Date(now()).toISOString() }, 'byok-used', record.id)
      // Written, then checked: a delete that took the record before this check is seen and the mark goes; one that
      // takes it after removes the mark itself.
      if (!(await atomic.read(recordKey(record.org_id, record.id)))) await kv.remove('byok-used', record.id)
    },
  }
}

/** A credential cannot both remove the service's key for its provider and wait for that key to fail first (400). */
function assertCombinable(record: CredentialRecord): CredentialRecord {
  if (record.is_byok_only && record.is_fallback) {
    throw new GatewayError(400, 'is_byok_only: a fallback credential (is_fallback) cannot also remove the service’s own key (is_byok_only)', {
      param: 'is_byok_only',
    })
  }
  return record
}

/** 400 for one credential more than an org may store. */
function tooMany(max: number): GatewayError {
  return new GatewayError(400, `An org may store at most ${max} BYOK credentials; delete one before adding another`, { metadata: { max_credentials: max } })
}

/** The BYOK store's operations. */
export type ByokStore = ReturnType<typeof createByokStore>
