import type { SecretBox } from '../crypto/secrets'
import { maskSecret, newId } from '../crypto/keys'
import { notFound } from '../errors'
import type { AtomicOps } from './atomic'
import type { Kv } from './kv'

/** A BYOK credential as the API shows it (api.md 2.4): never its secret. */
export interface Credential {
  id: string
  provider: string
  name: string
  label: string
  allowed_api_key_hashes: string[]
  allowed_models: string[]
  always_use: boolean
  is_fallback: boolean
  disabled: boolean
  sort_order: number
  created_at: string
  last_used: string | null
}

/** A credential as stored: its org, and its secret sealed (JWE). */
export interface CredentialRecord extends Omit<Credential, 'last_used'> {
  org_id: string
  sealed_key: string
}

/** Fields a create or update may set (decisions.md §7). */
export interface CredentialInput {
  key?: string
  name?: string
  label?: string
  allowed_api_key_hashes?: string[]
  allowed_models?: string[]
  always_use?: boolean
  is_fallback?: boolean
  disabled?: boolean
  sort_order?: number
}

const byOrder = (a: Credential, b: Credential) => a.sort_order - b.sort_order || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)

/** Customers' provider credentials over unstorage, secrets sealed, scoped to their org. */
export function createByokStore(options: { kv: Kv; atomic: AtomicOps; box: SecretBox; now: () => number }) {
  const { kv, atomic, box, now } = options
  const countKey = (orgId: string) => kv.key('byok-count', orgId)
  // Bumped by every create, update and delete (in the shared storage, so by any instance): a process keeps the
  // records it listed for that version and lists again only when it changes. Listing keys is a scan of the whole
  // store on most drivers (the memory driver's keys, Redis SCAN), with a usage record per request in it.
  const versionKey = (orgId: string) => kv.key('byok-version', orgId)
  const listed = new Map<string, { version: number; records: CredentialRecord[] }>()
  const changed = (orgId: string) => atomic.increment(versionKey(orgId), 1)

  const view = async (record: CredentialRecord): Promise<Credential> => {
    const { org_id: _org, sealed_key: _sealed, ...rest } = record
    const used = await kv.get<{ at: string }>('byok-used', record.id)
    return { ...rest, last_used: used?.at ?? null }
  }

  async function records(orgId: string): Promise<CredentialRecord[]> {
    // Most orgs have none: one counter read answers that without listing keys.
    if ((await atomic.increment(countKey(orgId), 0)) <= 0) return []
    const version = await atomic.increment(versionKey(orgId), 0)
    const cached = listed.get(orgId)
    if (cached && version > 0 && cached.version === version) return cached.records
    const ids = await kv.list('byok', orgId)
    const found = await Promise.all(ids.map((id) => kv.get<CredentialRecord>('byok', orgId, id)))
    const records = found.filter((r): r is CredentialRecord => r !== null)
    if (version > 0) {
      listed.delete(orgId)
      if (listed.size >= 10_000) listed.delete(listed.keys().next().value!) // the oldest listed org
      listed.set(orgId, { version, records })
    }
    return records
  }

  async function requireRecord(orgId: string, id: string): Promise<CredentialRecord> {
    // The key includes the org: another org's id is simply not found (never "forbidden").
    const record = await kv.get<CredentialRecord>('byok', orgId, id.toLowerCase())
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
    records: async (orgId: string) => [...(await records(orgId))].sort((a, b) => byOrder({ ...a, last_used: null }, { ...b, last_used: null })),

    /** Stores a credential with its secret sealed. */
    async create(orgId: string, input: CredentialInput & { key: string; provider: string; providerName: string }): Promise<Credential> {
      const record: CredentialRecord = {
        id: newId(),
        org_id: orgId,
        provider: input.provider,
        name: input.name ?? input.providerName,
        label: input.label ?? maskSecret(input.key),
        allowed_api_key_hashes: (input.allowed_api_key_hashes ?? []).map((h) => h.toLowerCase()),
        allowed_models: input.allowed_models ?? [],
        always_use: input.always_use ?? false,
        is_fallback: input.is_fallback ?? false,
        disabled: input.disabled ?? false,
        sort_order: input.sort_order ?? 0,
        created_at: new Date(now()).toISOString(),
        sealed_key: await box.seal(input.key),
      }
      await kv.set(record, 'byok', orgId, record.id)
      await atomic.increment(countKey(orgId), 1)
      await changed(orgId)
      return view(record)
    },

    /** Reads one of the org's credentials (404 for another org's). */
    get: async (orgId: string, id: string): Promise<Credential> => view(await requireRecord(orgId, id)),

    /** Updates fields; a new `key` rotates the secret in place (and resets the masked label unless one is given). */
    async update(orgId: string, id: string, patch: CredentialInput): Promise<Credential> {
      const record = await requireRecord(orgId, id)
      const { key, ...fields } = patch
      const next: CredentialRecord = {
        ...record,
        ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
        ...(fields.allowed_api_key_hashes ? { allowed_api_key_hashes: fields.allowed_api_key_hashes.map((h) => h.toLowerCase()) } : {}),
        ...(key ? { sealed_key: await box.seal(key), label: fields.label ?? maskSecret(key) } : {}),
      }
      await kv.set(next, 'byok', orgId, record.id)
      await changed(orgId)
      return view(next)
    },

    /** Deletes one of the org's credentials. */
    async remove(orgId: string, id: string): Promise<{ deleted: true }> {
      const record = await requireRecord(orgId, id)
      await kv.remove('byok', orgId, record.id)
      await kv.remove('byok-used', record.id)
      await atomic.increment(countKey(orgId), -1)
      await changed(orgId)
      return { deleted: true }
    },

    /** The record of one of the org's credentials, with its secret still sealed. */
    record: requireRecord,

    /** The plain secret of a record (only ever sent upstream). */
    secretOf: (record: CredentialRecord): Promise<string> => box.open(record.sealed_key),

    /** Records that a credential served a request. */
    touch: (record: CredentialRecord) => kv.set({ at: new Date(now()).toISOString() }, 'byok-used', record.id),
  }
}

/** The BYOK store's operations. */
export type ByokStore = ReturnType<typeof createByokStore>
