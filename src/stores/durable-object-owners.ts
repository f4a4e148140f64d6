// Which Durable Object owns a storage key when the gateway's objects are sharded by org (docs/edge.md#one-object-per-org):
// read from the key alone. Keys that name their org go to the org's object; a key's, a user's and a BYOK fee claim's
// keys name only their hash or id, and go where the engine's directory says (src/stores/durable-object-router.ts);
// every other key (accounts, catalogue, PKCE codes, epochs…) goes to the global object.

/** The owner of a key: an org's object, the object a directory entry names, or the global object. */
export type KeyOwner = { org: string } | { via: DirectoryKind; id: string } | { global: true }

/** The kinds of keys whose org only the engine's directory knows: a key's (by hash), a user's (by id), a BYOK fee's claim (by id). */
export type DirectoryKind = 'key' | 'user' | 'claim'

/** The global object: accounts, the catalogue, PKCE codes, and every key that names no org. */
export const GLOBAL: KeyOwner = { global: true }

// First segments of records whose second segment is their org.
const ORG_SECOND = new Set(['ledger', 'usage', 'generation-ids', 'byok-pending', 'byok-orgs', 'byok-requests', 'byok', 'byok-index', 'rollups'])

// holds:<kind><what>:… (src/stores/spend-counters.ts): the subject kind a holds key's second segment starts with.
function holdsOwner(kindWhat: string, rest: string[]): KeyOwner | null {
  if (kindWhat.startsWith('end-user')) return rest[0] ? { org: rest[0] } : null
  if (!rest[0]) return null
  if (kindWhat.startsWith('user')) return { via: 'user', id: rest[0] }
  if (kindWhat.startsWith('key')) return { via: 'key', id: rest[0] }
  if (kindWhat.startsWith('org')) return { org: rest[0] }
  return GLOBAL
}

// credits:<org>:…, credits:org:<org>:…, credits:end-user:<org>:…, credits:key:<hash>:…, credits:user:<id>:…
function creditsOwner(parts: string[]): KeyOwner | null {
  const [subject, id] = parts
  if (!subject) return null
  if (subject === 'key' || subject === 'user') return id ? { via: subject, id } : null
  if (subject === 'org' || subject === 'end-user') return id ? { org: id } : null
  return { org: subject }
}

/**
 * The owner of `key` (a full storage key, or a listing's base without its last colon) under the gateway's storage
 * `prefix`; null when the key is a prefix of keys that several objects own (`gateway:usage`, `gateway:credits:key`,
 * `gateway`): a listing of it asks every object.
 */
export function ownerOfKey(key: string, prefix: string): KeyOwner | null {
  let rest = key
  if (prefix) {
    if (key === prefix || key === '') return null
    if (!key.startsWith(`${prefix}:`)) return prefix.startsWith(`${key}:`) ? null : GLOBAL
    rest = key.slice(prefix.length + 1)
  } else if (key === '') return null
  const [kind, ...parts] = rest.split(':')
  if (kind === 'credits') return creditsOwner(parts)
  if (kind === 'holds') return parts[0] ? holdsOwner(parts[0], parts.slice(1)) : null
  if (kind === 'byok-settled') return parts[0] ? { via: 'claim', id: parts[0] } : null
  if (ORG_SECOND.has(kind)) return parts[0] ? { org: parts[0] } : null
  return GLOBAL
}
