// Moving a one-object deployment's data into one object per org (docs/edge.md#moving-a-deployment-to-one-object-per-org):
// every key the global object holds that per-org routing gives to an org's object is copied there and then removed
// from the global object, the orgs listed for listings and the directory written for keys, users and claims, as the
// per-org router (src/stores/durable-object-router.ts) would have found them had it run from the start.
import { GatewayError } from '../errors'
import { type DurableObjectNamespaceLike, type ObjectCall, objectCall } from './durable-object-call'
import { type DirectoryKind, GLOBAL, ownerOfKey } from './durable-object-owners'
import { ENGINE_KEYS } from './durable-object-router'

/** Which deployment to move: its (global) object's name and its gateway's storagePrefix. */
export interface PerOrgMigrationOptions {
  /** The one object's name, which stays the global object's. Default `model-gateway`. */
  objectName?: string
  /** The gateway's `storagePrefix`, where the keys' orgs are read. Default `gateway`. */
  prefix?: string
}

/** What a migration did: keys moved, orgs given an object, directory entries written, keys left in the global object. */
export interface PerOrgMigration {
  /** Keys copied into their org's object and removed from the global one. */
  moved: number
  /** Orgs whose object received keys (listed in the global object for listings across orgs). */
  orgs: number
  /** Directory entries written for a key's, a user's or a claim's keys (none on a run that found them written). */
  directory: number
  /** Keys that stay in the global object (accounts, the catalogue, rate limit windows, keys of no org…). */
  stayed: number
}

// Keys whose org is their second segment and whose last segments are a request's id: a BYOK fee's claim
// (`byok-settled:<id>`) names only that id, so its org is the one whose pointer or pending fee names it.
const ID_KINDS = new Set(['generation-ids', 'byok-pending'])

/**
 * Moves the data of a gateway that ran with one Durable Object (`objectName`) into one object per org
 * (docs/edge.md#moving-a-deployment-to-one-object-per-org), so that `perOrg` can be turned on: each key an org's
 * object owns under per-org routing is copied there, then removed from the global object; the directory names the org
 * of each key's, user's and BYOK fee claim's keys. Run it while no gateway serves (every instance stopped or
 * refusing): a request served meanwhile by a one-object gateway could write a key already moved. Safe to run again:
 * a run after a complete one moves nothing, and one after a run cut short finishes it.
 */
export async function migrateToPerOrg(namespace: DurableObjectNamespaceLike, options: PerOrgMigrationOptions = {}): Promise<PerOrgMigration> {
  const name = options.objectName ?? 'model-gateway'
  const prefix = options.prefix ?? 'gateway'
  const global = objectCall(namespace, name)
  const keys = (await global<string[]>('getKeys')).filter((key) => !key.startsWith(ENGINE_KEYS)).sort()
  const local = (key: string) => (prefix ? key.slice(prefix.length + 1) : key)
  const idOrgs = new Map<string, string>()
  for (const key of keys) {
    const owner = ownerOfKey(key, prefix)
    const [kind, , ...id] = local(key).split(':')
    if (owner && 'org' in owner && ID_KINDS.has(kind) && id.length) idOrgs.set(id.join(':'), owner.org)
  }
  const result: PerOrgMigration = { moved: 0, orgs: 0, directory: 0, stayed: 0 }
  const routes = new Map<string, string | null>()
  const listed = new Set<string>()
  const objects = new Map<string, ObjectCall>()

  // The org of a key's, a user's or a claim's keys: the directory's entry if one was written (by an earlier run),
  // else the org of its record (a key's or a user's) or of its request (a claim), written down; null: none, the
  // global object keeps them (as per-org routing would for keys written with no org).
  const directory = async (kind: DirectoryKind, id: string): Promise<string | null> => {
    const entry = `${kind}:${id}`
    const known = routes.get(entry)
    if (known !== undefined) return known
    const routeKey = `${ENGINE_KEYS}route:${entry}`
    let found = await global<{ org: string | null } | null>('read', routeKey)
    if (!found) {
      const wanted = { org: await orgOf(kind, id) }
      if (await global<boolean>('setIfAbsent', routeKey, wanted)) {
        result.directory++
        found = wanted
      } else found = await global<{ org: string | null }>('read', routeKey)
    }
    routes.set(entry, found.org)
    return found.org
  }
  const orgOf = async (kind: DirectoryKind, id: string): Promise<string | null> => {
    if (kind === 'claim') return idOrgs.get(id) ?? null
    const recordKey = [prefix, kind === 'key' ? 'keys' : 'users', id].filter(Boolean).join(':')
    const record = await global<{ org_id?: unknown } | null>('getItem', recordKey)
    return typeof record?.org_id === 'string' && record.org_id ? record.org_id : null
  }
  const objectOf = async (org: string): Promise<ObjectCall> => {
    if (!listed.has(org)) {
      // Listed before its first key goes in, as the router does: a listing across orgs finds every org's object.
      await global('setIfAbsent', `${ENGINE_KEYS}orgs:${org}`, { org })
      listed.add(org)
      result.orgs++
      objects.set(org, objectCall(namespace, `${name}:org:${org}`))
    }
    return objects.get(org) as ObjectCall
  }

  for (const key of keys) {
    const owner = ownerOfKey(key, prefix) ?? GLOBAL
    const org = 'org' in owner ? owner.org : 'via' in owner ? await directory(owner.via, owner.id) : null
    if (org === null) {
      result.stayed++
      continue
    }
    const target = await objectOf(org)
    const value = await global<unknown>('getItem', key)
    // Written where it belongs before it leaves the global object: a run cut short between the two copies it again.
    if (value !== null) await target('setItem', key, value)
    await global('removeItem', key)
    result.moved++
  }
  const left = (await global<string[]>('getKeys')).filter((key) => {
    const owner = ownerOfKey(key, prefix)
    return owner && 'org' in owner
  })
  if (left.length)
    throw new GatewayError(
      500,
      `the migration to one object per org left keys of an org in the global object (written meanwhile?): ${left.slice(0, 5).join(', ')}`,
    )
  return result
}
