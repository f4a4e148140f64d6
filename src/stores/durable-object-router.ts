import { GatewayError } from '../errors'
import { type DurableObjectNamespaceLike, type ObjectCall, objectCall } from './durable-object-call'
import { type DirectoryKind, GLOBAL, type KeyOwner, ownerOfKey } from './durable-object-owners'

/**
 * Which Durable Object serves each operation (docs/edge.md#one-object-per-org): one object for the whole gateway, or
 * one per org beside a global one.
 */
export interface ObjectRouter {
  /** The object owning `key`; `writing` learns (and writes down) the org of a key that does not name it. */
  forKey(key: string, writing: boolean): Promise<ObjectCall>
  /** The one object owning every key of one atomic step; a GatewayError when they live in two objects. */
  forStep(keys: string[]): Promise<ObjectCall>
  /** Every object that may hold keys under `base` (a listing's base, as unstorage gives it: empty or ending in a colon). */
  forListing(base: string): Promise<ObjectCall[]>
  /** After `key` was removed: a BYOK fee's claim, removed by the retention sweep, takes its directory entry with it. */
  removed(key: string): Promise<void>
  /** Forgets what it learnt of the directory (after a clear of every record). */
  forget(): void
}

/** Keys of the engine's own in the global object (`$do-…`): never a gateway record, left out of listings. */
export const ENGINE_KEYS = '$do-'
// `$do-route:<kind>:<id>` → { org }: the org (null: the global object) of a key's, a user's or a claim's keys.
const ROUTE = `${ENGINE_KEYS}route:`
// `$do-orgs:<org>`: an org whose object was given a key, for listings to ask.
const SHARD = `${ENGINE_KEYS}orgs:`

/** The router of a gateway with one object, `name`: every operation goes there. */
export function singleObjectRouter(namespace: DurableObjectNamespaceLike, name: string): ObjectRouter {
  const only = objectCall(namespace, name)
  const answer = Promise.resolve(only)
  const all = Promise.resolve([only])
  return { forKey: () => answer, forStep: () => answer, forListing: () => all, removed: async () => undefined, forget: () => undefined }
}

const spans = (keys: string[]) => new GatewayError(500, `the keys of one atomic step belong to two Durable Objects (one object per org): ${keys.join(', ')}`)

/**
 * The router of a gateway with one object per org (`<name>:org:<org>`) and a global one (`name`): a key that names
 * its org goes to the org's object; a key's, a user's or a BYOK claim's keys to the org the global object's directory
 * names for it, written by the first atomic step that names their org with them (or, for a write without an org, from
 * the key's or user's record; else the global object, for good); every other key to the global object. `prefix` is the
 * gateway's storagePrefix.
 */
export function perOrgRouter(namespace: DurableObjectNamespaceLike, name: string, prefix: string): ObjectRouter {
  const global = objectCall(namespace, name)
  const objects = new Map<string, ObjectCall>()
  const shards = new Map<string, Promise<unknown>>()
  const routes = new Map<string, string | null>()
  const recordKey = (kind: string, id: string) => (prefix ? `${prefix}:${kind}:${id}` : `${kind}:${id}`)

  const objectOf = (org: string): ObjectCall => {
    let call = objects.get(org)
    if (!call) objects.set(org, (call = objectCall(namespace, `${name}:org:${org}`)))
    return call
  }
  // An org's object, listed in the global object before its first call from here (so that listings find it).
  const orgObject = async (org: string | null): Promise<ObjectCall> => {
    if (org === null) return global
    let listed = shards.get(org)
    if (!listed) {
      shards.set(org, (listed = global('setIfAbsent', `${SHARD}${org}`, { org })))
      listed.catch(() => shards.delete(org))
    }
    await listed
    return objectOf(org)
  }
  // The org whose object keeps a key's, user's or claim's keys: the directory's entry; without one, `org` (a step's)
  // or, writing, the org of the key's or user's record, else the global object (null), written down for good; reading
  // without an entry, undefined: nothing was ever written for it, anywhere.
  const directory = async (kind: DirectoryKind, id: string, org: string | undefined, writing: boolean): Promise<string | null | undefined> => {
    const entry = `${kind}:${id}`
    const known = routes.get(entry)
    if (known !== undefined) return known
    const key = `${ROUTE}${entry}`
    let found = await global<{ org: string | null } | null>('read', key)
    if (!found && (org !== undefined || writing)) {
      const wanted = { org: org ?? (await recordOrg(kind, id)) }
      found = (await global<boolean>('setIfAbsent', key, wanted)) ? wanted : await global<{ org: string | null }>('read', key)
    }
    if (!found) return undefined
    routes.set(entry, found.org)
    return found.org
  }
  const recordOrg = async (kind: DirectoryKind, id: string): Promise<string | null> => {
    if (kind === 'claim') return null
    const record = await global<{ org_id?: unknown } | null>('read', recordKey(kind === 'key' ? 'keys' : 'users', id))
    return typeof record?.org_id === 'string' && record.org_id ? record.org_id : null
  }
  const orgOf = async (owner: KeyOwner, org: string | undefined, writing: boolean): Promise<string | null> => {
    if ('org' in owner) return owner.org
    if ('via' in owner) return (await directory(owner.via, owner.id, org, writing)) ?? null
    return null
  }

  return {
    async forKey(key, writing) {
      return orgObject(await orgOf(ownerOfKey(key, prefix) ?? GLOBAL, undefined, writing))
    },
    async forStep(keys) {
      const owners = keys.map((key) => ownerOfKey(key, prefix) ?? GLOBAL)
      const named = new Set(owners.flatMap((owner) => ('org' in owner ? [owner.org] : [])))
      if (named.size > 1) throw spans(keys)
      const org = named.size ? [...named][0] : undefined
      const orgs = new Set(await Promise.all(owners.map((owner) => orgOf(owner, org, true))))
      if (orgs.size > 1) throw spans(keys)
      return orgObject(orgs.size ? [...orgs][0] : null)
    },
    async forListing(base) {
      const owner = ownerOfKey(base.endsWith(':') ? base.slice(0, -1) : base, prefix)
      if (owner) return [await orgObject(await orgOf(owner, undefined, false))]
      const listed = await global<string[]>('getKeys', SHARD)
      return [global, ...listed.map((key) => objectOf(key.slice(SHARD.length)))]
    },
    async removed(key) {
      // A claim is made once, for one request's fee, and removed once its usage record is gone: its entry can go.
      const owner = ownerOfKey(key, prefix)
      if (!owner || !('via' in owner) || owner.via !== 'claim') return
      routes.delete(`claim:${owner.id}`)
      await global('removeItem', `${ROUTE}claim:${owner.id}`)
    },
    forget() {
      routes.clear()
      shards.clear()
    },
  }
}
