import { GatewayError, invalidRequest, notFound } from '../errors'
import { generateApiKey, isWellFormedKey, newId, sha256Hex } from '../crypto/keys'
import type { ApiKeyRecord, IssuedKey, IssueKeyInput, KeyAncestor, Org, Principal, User } from './account-types'
import type { AtomicOps } from './engine-types'
import { createKeyCap } from './key-cap'
import { createKeyList, type KeyListing } from './key-list'
import type { Kv } from './kv'
import type { PrincipalCache } from './principal-cache'
import { createRevokedKeys } from './revoked-keys'
import { sessionKeyOf } from './session-key'

/** What a key above a minted key bounds it by, from its record (only the fields that are set). */
export function ancestorOf(record: ApiKeyRecord): KeyAncestor {
  return {
    hash: record.hash,
    credit_limit: record.credit_limit,
    ...(record.limit_reset ? { limit_reset: record.limit_reset } : {}),
    ...(record.include_byok_in_limit ? { include_byok_in_limit: true } : {}),
    ...(record.rules ? { rules: record.rules } : {}),
    ...(record.traffic_limits ? { traffic_limits: record.traffic_limits } : {}),
  }
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
  /** The authentication cache: resolved keys, emptied by every change to a key or user (docs/keys.md#the-authentication-cache). */
  cache?: PrincipalCache
  /** Live keys an org may have at most (docs/keys.md#how-many-keys-an-org-may-have). */
  maxKeysPerOrg: number
}

const iso = (ms: number) => new Date(ms).toISOString()
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/
/** Keys revoked at once when a revocation reaches the keys a key minted. */
const CASCADE_AT_ONCE = 16

/** True when a key record can authenticate at `now`: not revoked (nor deleted), not disabled, not expired. */
export function isUsableKey(record: ApiKeyRecord, now: number): boolean {
  return !record.revoked && !record.disabled && !(record.expires_at != null && Date.parse(record.expires_at) <= now)
}

/** Orgs, users and API keys over unstorage (docs/keys.md, docs/money.md). */
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

  const recordKey = (hash: string) => kv.key('keys', hash)

  // The keys above a minted key as they are now (a limit changed through PATCH /keys/{hash} bounds it at once), or
  // null when one of them is missing, revoked, deleted, disabled or expired: its descendants are refused with it
  // (docs/keys.md#minting-a-key-can-never-do-more-than-the-key-that-made-it).
  async function currentAncestors(ancestors: KeyAncestor[]): Promise<KeyAncestor[] | null> {
    const records = await Promise.all(ancestors.map((a) => atomic.read<ApiKeyRecord>(recordKey(a.hash))))
    const at = now()
    if (records.some((record) => !record || !isUsableKey(record, at))) return null
    return records.map((record) => ancestorOf(record!))
  }

  const keyList = createKeyList({ kv, atomic, recordKey })
  const cap = createKeyCap({
    kv,
    atomic,
    max: options.maxKeysPerOrg,
    async countLive(orgId) {
      await indexOrgKeys()
      const records = await Promise.all((await kv.list('org-keys', orgId)).map((hash) => atomic.read<ApiKeyRecord>(recordKey(hash))))
      return records.filter((record) => record && record.org_id === orgId && !record.revoked).length
    },
  })

  // Revoked and deleted keys are indexed by the time of their revocation, for the retention sweep to remove
  // (docs/retention.md#revoked-and-deleted-keys).
  const revoked = createRevokedKeys({ kv, atomic, now, recordKey, keyList, revoke: (hash) => store.revokeKey(hash) })

  // A key was revoked (or deleted) just now: it no longer counts against its org's cap, and the keys it minted are
  // revoked too (they were refused from the moment it was: this frees their room and shows them as disabled). One
  // that cannot be revoked now (a storage error) stays refused all the same, and can be deleted later.
  async function afterRevocation(record: ApiKeyRecord): Promise<void> {
    await cap.release(record.org_id)
    const children = await kv.list('minted-by', record.hash)
    for (let i = 0; i < children.length; i += CASCADE_AT_ONCE) {
      await Promise.all(children.slice(i, i + CASCADE_AT_ONCE).map((hash) => store.revokeKey(hash).catch(() => undefined)))
    }
  }

  // Keys issued before the org index existed are indexed once, on the first listing (one pass over every key).
  let indexed = false
  async function indexOrgKeys(): Promise<void> {
    if (indexed || (await kv.get('org-keys-indexed'))) {
      indexed = true
      return
    }
    for (const hash of await kv.list('keys')) {
      const record = await atomic.read<ApiKeyRecord>(recordKey(hash))
      if (record && !record.deleted_at) await kv.set({ hash }, 'org-keys', record.org_id, hash)
    }
    await kv.set({ at: iso(now()) }, 'org-keys-indexed')
    indexed = true
  }

  // Key hashes whose stale cache entry is being read again (one read at a time per key).
  const refreshing = new Set<string>()
  const expired = (record: ApiKeyRecord) => record.expires_at !== null && record.expires_at !== undefined && Date.parse(record.expires_at) <= now()
  // A key's record, user and org read from storage, cached when usable; null when unknown, revoked, disabled or expired.
  const loadKey = async (hash: string): Promise<Principal | null> => {
    const generation = options.cache?.generation() ?? 0
    const record = await atomic.read<ApiKeyRecord>(recordKey(hash))
    if (!record || record.revoked || record.disabled || expired(record)) return null
    const [user, ancestors] = await Promise.all([getUser(record.user_id), record.ancestors?.length ? currentAncestors(record.ancestors) : undefined])
    if (ancestors === null) return null // a key above it is revoked, deleted, disabled or expired
    const org = user && (await getOrg(user.org_id))
    if (!user || !org) return null
    const principal = { key: ancestors ? { ...record, ancestors } : record, user, org }
    options.cache?.set(hash, principal, generation)
    return principal
  }
  // A key hash's principal as the authentication cache answers it: live, or stale (served while it is read again off
  // the request path, so that a busy key never waits for its three records: docs/keys.md#the-authentication-cache);
  // null when it expired; undefined when the cache does not know it.
  const cachedKey = (hash: string): Principal | null | undefined => {
    const cached = options.cache?.get(hash)
    if (cached) return expired(cached.key) ? null : cached
    const stale = options.cache?.stale(hash)
    if (!stale) return undefined
    if (!refreshing.has(hash)) {
      refreshing.add(hash)
      void loadKey(hash)
        .then((principal) => principal ?? options.cache?.delete(hash))
        .catch(() => options.cache?.delete(hash))
        .finally(() => refreshing.delete(hash))
    }
    return expired(stale.key) ? null : stale
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
      await cap.start(org.id)
      return org
    },

    /**
     * Creates a user in an existing org, or in a new org named `orgName` (default: the email). With `hostId` (a host
     * session's user, docs/first-party.md#host-users) the email is optional and only claimed when free: the user is
     * known by the host's id, and findUserByEmail finds it only when it owns the email.
     */
    async createUser(input: { email?: string; orgId?: string; orgName?: string; plan?: string; id?: string; hostId?: string }): Promise<User> {
      const email = input.email?.trim().toLowerCase() ?? ''
      const host = input.hostId !== undefined
      if (!host && (!email || !EMAIL_RE.test(email))) throw invalidRequest('email: must be an email address', 'email')
      if (input.orgId && !(await getOrg(input.orgId))) throw notFound(`Org ${input.orgId} not found`)
      const id = input.id ?? newId()
      const owned = email !== '' && EMAIL_RE.test(email) && (await atomic.setIfAbsent(kv.key('emails', sha256Hex(email)), { user_id: id }))
      if (!host && !owned) throw new GatewayError(409, 'A user with this email already exists', { param: 'email' })
      const orgId = input.orgId ?? (await store.createOrg({ name: input.orgName ?? (email || `user ${input.hostId}`) })).id
      const user: User = {
        id,
        org_id: orgId,
        email: host && !owned ? '' : email,
        plan: input.plan ?? options.defaultPlan,
        disabled: false,
        created_at: iso(now()),
        ...(host ? { host_id: input.hostId } : {}),
      }
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
      return store.changeUser(id, (user) => ({ ...user, ...patch }))
    },

    /**
     * Changes a user record in one atomic step (its limits: docs/first-party.md#budgets-for-users-and-end-users): `fn`
     * gets the current record and returns the next one, or throws to change nothing; it may run more than once. 404
     * when the user does not exist. Keys resolved before it (the authentication cache) see the change at once.
     */
    async changeUser(id: string, fn: (user: User) => User): Promise<User> {
      const user = (await atomic.update<User>(kv.key('users', id), (current) => {
        if (!current) throw notFound(`User ${id} not found`)
        return fn(current)
      }))!
      await options.cache?.invalidate()
      return user
    },

    /** Changes an org record in one atomic step (its end users' limits), as `changeUser`; 404 when it does not exist. */
    async changeOrg(id: string, fn: (org: Org) => Org): Promise<Org> {
      const org = (await atomic.update<Org>(kv.key('orgs', id), (current) => {
        if (!current) throw notFound(`Org ${id} not found`)
        return fn(current)
      }))!
      await options.cache?.invalidate()
      return org
    },

    /** Issues a new API key for a user; the key is returned once and stored only as its hash. */
    async issueKey(input: IssueKeyInput): Promise<IssuedKey> {
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
        ...(input.limitReset ? { limit_reset: input.limitReset } : {}),
        ...(input.includeByokInLimit ? { include_byok_in_limit: true } : {}),
        ...(input.ancestors?.length ? { ancestors: input.ancestors } : {}),
        ...(input.management ? { management: true } : {}),
        ...(input.creatorUserId && input.creatorUserId !== user.id ? { creator_user_id: input.creatorUserId } : {}),
        ...(input.rules ? { rules: input.rules } : {}),
        ...(input.trafficLimits && Object.keys(input.trafficLimits).length ? { traffic_limits: input.trafficLimits } : {}),
      }
      // Counted against the org's cap first (403 past it); the count is given back if the key cannot be written.
      await cap.claim(user.org_id)
      try {
        await kv.set(record, 'keys', record.hash)
      } catch (error) {
        await cap.release(user.org_id).catch(() => undefined)
        throw error
      }
      const parent = input.ancestors?.[0]?.hash
      await Promise.all([
        kv.set({ hash: record.hash }, 'user-keys', user.id, record.hash),
        kv.set({ hash: record.hash }, 'org-keys', user.org_id, record.hash),
        parent ? kv.set({ hash: record.hash }, 'minted-by', parent, record.hash) : undefined,
        keyList.sync(record.hash),
      ])
      return { key, record }
    },

    /** Reads a key record, with its `last_used`, by the key or by its hash. */
    async getKey(keyOrHash: string): Promise<ApiKeyRecord | null> {
      const hash = isWellFormedKey(keyOrHash, options.keyPrefix) ? sha256Hex(keyOrHash) : keyOrHash.toLowerCase()
      if (!/^[0-9a-f]{64}$/.test(hash)) return null
      const [record, used] = await Promise.all([atomic.read<ApiKeyRecord>(recordKey(hash)), kv.get<{ at: string }>('key-used', hash)])
      return record && { ...record, last_used: used?.at ?? null }
    },

    /**
     * Changes a key record in one atomic step (docs/keys.md#the-key-routes): `fn` gets the current record and returns
     * the next one, or throws to change nothing; it may run more than once. 404 when the key does not exist.
     */
    async updateKey(hash: string, fn: (record: ApiKeyRecord) => ApiKeyRecord): Promise<ApiKeyRecord> {
      // The org's count exists before a revocation can change it (src/stores/key-cap.ts).
      const before = await atomic.read<ApiKeyRecord>(recordKey(hash))
      if (before) await cap.ensure(before.org_id)
      // `fn` may run more than once: what the last run saw is what was written.
      let revokedNow = false
      const next = (await atomic.update<ApiKeyRecord>(recordKey(hash), (record) => {
        if (!record) throw notFound('API key not found')
        const changed = fn(record)
        revokedNow = !record.revoked && changed.revoked
        return { ...changed, rev: (record.rev ?? 0) + 1 }
      }))!
      // In the index of revoked keys before anything else, so that the sweep removes it in time (written again by any
      // later change: the same entry).
      if (next.revoked) await revoked.note(next)
      await options.cache?.invalidate()
      await keyList.sync(hash)
      if (revokedNow) await afterRevocation(next)
      const used = await kv.get<{ at: string }>('key-used', hash)
      return { ...next, last_used: used?.at ?? null }
    },

    /** Revokes a key (by the key or its hash): it, and every key it minted, answers 401 from then on. */
    async revokeKey(keyOrHash: string): Promise<ApiKeyRecord> {
      const record = await store.getKey(keyOrHash)
      if (!record) throw notFound('API key not found')
      const at = iso(now())
      return store.updateKey(record.hash, (current) => ({ ...current, revoked: true, revoked_at: current.revoked_at ?? at }))
    },

    /**
     * Deletes a key (DELETE /keys/{hash}): it is revoked (so are the keys it minted) and leaves its org's key list; its
     * record stays (revoked) until the retention sweep removes it (`retention.revokedKeysDays`); its codes are void
     * either way. `check` may refuse (throw) in the same step.
     */
    async deleteKey(hash: string, check?: (record: ApiKeyRecord) => void): Promise<void> {
      const at = iso(now())
      const record = await store.updateKey(hash, (current) => {
        check?.(current)
        return { ...current, revoked: true, revoked_at: current.revoked_at ?? at, deleted_at: current.deleted_at ?? at }
      })
      await kv.remove('org-keys', record.org_id, hash)
    },

    /**
     * One page of an org's ordinary keys (records only, never secrets; deleted and management keys left out), newest
     * first, `limit` at most from `offset`: the enabled ones, or with `all` the disabled and revoked ones too. Reads
     * only the page's records (docs/keys.md#the-key-routes).
     */
    async pageOrgKeys(orgId: string, listing: KeyListing, offset: number, limit: number): Promise<ApiKeyRecord[]> {
      const hashes = await keyList.page(orgId, listing, offset, limit)
      const records = await Promise.all(hashes.map((hash) => store.getKey(hash)))
      return records.filter((r): r is ApiKeyRecord => r !== null && r.org_id === orgId && !r.deleted_at && !r.management)
    },

    /**
     * The keys above a minted key as their records are now, or null when one of them can no longer be used (missing,
     * revoked, deleted, disabled or expired): then neither can the keys below it.
     */
    currentAncestors,

    /** How many live (not revoked) keys an org has, as its cap counts them. */
    liveKeyCount: (orgId: string): Promise<number> => cap.live(orgId),

    /** Lists a user's keys (records only, never secrets), oldest first. */
    async listKeys(userId: string): Promise<ApiKeyRecord[]> {
      const hashes = await kv.list('user-keys', userId)
      const records = await Promise.all(hashes.map((hash) => store.getKey(hash)))
      return records.filter((r): r is ApiKeyRecord => r !== null).sort((a, b) => a.created_at.localeCompare(b.created_at))
    },

    /** Stops the authentication cache's reading of the shared epoch (the gateway's close). */
    stopCache(): void {
      options.cache?.stop()
    },

    /**
     * Records that a key was used (callers throttle this); kept apart from the record so it never races a revocation.
     * A key whose record the retention sweep removed meanwhile keeps no trace of its use.
     */
    async touchKey(record: ApiKeyRecord): Promise<void> {
      await kv.set({ at: iso(now()) }, 'key-used', record.hash)
      if (!(await atomic.read(recordKey(record.hash)))) await kv.remove('key-used', record.hash)
    },

    /** Indexes the keys revoked before the index of revoked keys existed, once (the retention sweep, before it looks). */
    indexRevokedKeys: (): Promise<void> => revoked.indexOnce(),

    /**
     * Removes a revoked key due for removal (`<revocation ms>-<hash>`, from the index) with everything kept about it;
     * true when this call removed its record (docs/retention.md#revoked-and-deleted-keys).
     */
    removeRevokedKey: (entry: string): Promise<boolean> => revoked.remove(entry),

    /**
     * The principal of a user's host session (docs/first-party.md#session-principals): its session key, user and org,
     * through the authentication cache; null when the user or its org is gone.
     */
    async resolveSessionUser(userId: string): Promise<Principal | null> {
      const cacheKey = `session-${userId}`
      const cached = options.cache?.get(cacheKey)
      if (cached) return cached
      const generation = options.cache?.generation() ?? 0
      const user = await getUser(userId)
      const org = user && (await getOrg(user.org_id))
      if (!user || !org) return null
      const principal: Principal = { key: sessionKeyOf(user), user, org, via: 'session' }
      options.cache?.set(cacheKey, principal, generation)
      return principal
    },

    /** Resolves a bearer key to its key, user and org; null when the key is unknown, revoked, disabled or expired. */
    async resolveKey(key: string): Promise<Principal | null> {
      if (!isWellFormedKey(key, options.keyPrefix)) return null
      const hash = sha256Hex(key)
      const known = cachedKey(hash)
      return known !== undefined ? known : loadKey(hash)
    },

    /**
     * A bearer key resolved at once, with no promise, when the authentication cache or its form answers (as
     * `resolveKey`); undefined when its records must be read.
     */
    resolveKeyNow(key: string): Principal | null | undefined {
      return isWellFormedKey(key, options.keyPrefix) ? cachedKey(sha256Hex(key)) : null
    },
  }
  return store
}

/** The accounts store's operations. */
export type AccountsStore = ReturnType<typeof createAccountsStore>
