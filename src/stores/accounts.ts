import { GatewayError, invalidRequest, notFound } from '../errors'
import { generateApiKey, isWellFormedKey, newId, sha256Hex } from '../crypto/keys'
import type { AtomicOps } from './atomic'
import type { Kv } from './kv'

/** An organisation: the billing entity whose credits its users share. */
export interface Org {
  id: string
  name: string
  created_at: string
}

/** A user of one org. */
export interface User {
  id: string
  org_id: string
  email: string
  plan: string
  disabled: boolean
  created_at: string
}

/** What the gateway keeps of an API key: never the key itself, only its SHA-256. */
export interface ApiKeyRecord {
  hash: string
  user_id: string
  org_id: string
  label: string
  created_at: string
  last_used: string | null
  expires_at: string | null
  revoked: boolean
  revoked_at: string | null
  /** Most this key may spend, in EUR (decimal string), or null for no limit. */
  credit_limit: string | null
  /** A key minted by another key (docs/keys.md): the keys above it, nearest first, whose limits bound it too. */
  ancestors?: KeyAncestor[]
}

/** A key above a minted key: its hash and credit limit, copied when the key was minted. */
export interface KeyAncestor {
  hash: string
  credit_limit: string | null
}

/** A freshly issued key: `key` is shown this once and never stored. */
export interface IssuedKey {
  key: string
  record: ApiKeyRecord
}

/** The user, org and key a bearer key resolves to. */
export interface Principal {
  key: ApiKeyRecord
  user: User
  org: Org
}

/** Options of the accounts store. */
export interface AccountsOptions {
  kv: Kv
  atomic: AtomicOps
  now: () => number
  keyPrefix: string
  /** Keys expire this many seconds after issue; undefined: never. */
  keyTtlSeconds?: number
  /** Plan of users created without one. */
  defaultPlan: string
}

const iso = (ms: number) => new Date(ms).toISOString()
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/

/** Orgs, users and API keys over unstorage (decisions.md §3, §4). */
export function createAccountsStore(options: AccountsOptions) {
  const { kv, atomic, now } = options

  async function getOrg(id: string): Promise<Org | null> {
    return kv.get<Org>('orgs', id)
  }
  async function getUser(id: string): Promise<User | null> {
    return kv.get<User>('users', id)
  }
  async function requireUser(id: string): Promise<User> {
    const user = await getUser(id)
    if (!user) throw notFound(`User ${id} not found`)
    return user
  }

  const store = {
    getOrg,
    getUser,
    requireUser,

    /** Creates an org. */
    async createOrg(input: { name: string; id?: string }): Promise<Org> {
      if (!input.name?.trim()) throw invalidRequest('name: must not be empty', 'name')
      const org: Org = { id: input.id ?? newId(), name: input.name.trim(), created_at: iso(now()) }
      if (!(await atomic.setIfAbsent(kv.key('orgs', org.id), org))) throw new GatewayError(409, `Org ${org.id} already exists`)
      return org
    },

    /** Creates a user in an existing org, or in a new org named `orgName` (default: the email). */
    async createUser(input: { email: string; orgId?: string; orgName?: string; plan?: string; id?: string }): Promise<User> {
      const email = input.email?.trim().toLowerCase()
      if (!email || !EMAIL_RE.test(email)) throw invalidRequest('email: must be an email address', 'email')
      if (input.orgId && !(await getOrg(input.orgId))) throw notFound(`Org ${input.orgId} not found`)
      const id = input.id ?? newId()
      if (!(await atomic.setIfAbsent(kv.key('emails', sha256Hex(email)), { user_id: id }))) {
        throw new GatewayError(409, 'A user with this email already exists', { param: 'email' })
      }
      const orgId = input.orgId ?? (await store.createOrg({ name: input.orgName ?? email })).id
      const user: User = { id, org_id: orgId, email, plan: input.plan ?? options.defaultPlan, disabled: false, created_at: iso(now()) }
      await kv.set(user, 'users', id)
      return user
    },

    /** Finds a user by email (case-insensitive). */
    async findUserByEmail(email: string): Promise<User | null> {
      const entry = await kv.get<{ user_id: string }>('emails', sha256Hex(email.trim().toLowerCase()))
      return entry ? getUser(entry.user_id) : null
    },

    /** Changes a user's plan or disabled flag. */
    async updateUser(id: string, patch: { plan?: string; disabled?: boolean }): Promise<User> {
      const user = { ...(await requireUser(id)), ...patch }
      await kv.set(user, 'users', id)
      return user
    },

    /** Issues a new API key for a user; the key is returned once and stored only as its hash. */
    async issueKey(input: { userId: string; label?: string; creditLimit?: string | null; expiresAt?: number; ancestors?: KeyAncestor[] }): Promise<IssuedKey> {
      const user = await requireUser(input.userId)
      const key = generateApiKey(options.keyPrefix)
      const created = now()
      const ttlExpiry = options.keyTtlSeconds ? created + options.keyTtlSeconds * 1000 : undefined
      const expiry = ttlExpiry !== undefined && input.expiresAt !== undefined ? Math.min(ttlExpiry, input.expiresAt) : (input.expiresAt ?? ttlExpiry)
      const record: ApiKeyRecord = {
        hash: sha256Hex(key),
        user_id: user.id,
        org_id: user.org_id,
        label: input.label ?? 'API key',
        created_at: iso(created),
        last_used: null,
        expires_at: expiry !== undefined ? iso(expiry) : null,
        revoked: false,
        revoked_at: null,
        credit_limit: input.creditLimit ?? null,
        ...(input.ancestors?.length ? { ancestors: input.ancestors } : {}),
      }
      await kv.set(record, 'keys', record.hash)
      await kv.set({ hash: record.hash }, 'user-keys', user.id, record.hash)
      return { key, record }
    },

    /** Reads a key record, with its `last_used`, by the key or by its hash. */
    async getKey(keyOrHash: string): Promise<ApiKeyRecord | null> {
      const hash = isWellFormedKey(keyOrHash, options.keyPrefix) ? sha256Hex(keyOrHash) : keyOrHash.toLowerCase()
      if (!/^[0-9a-f]{64}$/.test(hash)) return null
      const [record, used] = await Promise.all([kv.get<ApiKeyRecord>('keys', hash), kv.get<{ at: string }>('key-used', hash)])
      return record && { ...record, last_used: used?.at ?? null }
    },

    /** Revokes a key (by the key or its hash): it answers 401 from then on. */
    async revokeKey(keyOrHash: string): Promise<ApiKeyRecord> {
      const record = await store.getKey(keyOrHash)
      if (!record) throw notFound('API key not found')
      const revoked: ApiKeyRecord = { ...record, revoked: true, revoked_at: record.revoked_at ?? iso(now()) }
      await kv.set(revoked, 'keys', record.hash)
      return revoked
    },

    /** Lists a user's keys (records only, never secrets), oldest first. */
    async listKeys(userId: string): Promise<ApiKeyRecord[]> {
      const hashes = await kv.list('user-keys', userId)
      const records = await Promise.all(hashes.map((hash) => store.getKey(hash)))
      return records.filter((r): r is ApiKeyRecord => r !== null).sort((a, b) => a.created_at.localeCompare(b.created_at))
    },

    /** Records that a key was used (callers throttle this); kept apart from the record so it never races a revocation. */
    async touchKey(record: ApiKeyRecord): Promise<void> {
      await kv.set({ at: iso(now()) }, 'key-used', record.hash)
    },

    /** Resolves a bearer key to its key, user and org; null when the key is unknown, revoked or expired. */
    async resolveKey(key: string): Promise<Principal | null> {
      if (!isWellFormedKey(key, options.keyPrefix)) return null
      const record = await kv.get<ApiKeyRecord>('keys', sha256Hex(key))
      if (!record || record.revoked) return null
      if (record.expires_at && Date.parse(record.expires_at) <= now()) return null
      const user = await getUser(record.user_id)
      const org = user && (await getOrg(user.org_id))
      return user && org ? { key: record, user, org } : null
    },
  }
  return store
}

/** The accounts store's operations. */
export type AccountsStore = ReturnType<typeof createAccountsStore>
