import { newId } from '../crypto/keys'
import type { AtomicOps } from './engine-types'
import type { Kv } from './kv'

/**
 * Indexes credentials stored before the per-org index existed (model-gateway 0.1 kept a `byok-count` counter and a
 * `byok-version` per org instead): each such org's records get their ids added to its index, then the old counters go.
 * Idempotent, so every instance may run it at start. Returns the orgs it indexed.
 */
export async function indexLegacyCredentials(kv: Kv, atomic: AtomicOps): Promise<number> {
  let orgs = 0
  for (const orgId of await kv.list('byok-count')) {
    const ids = (await kv.list('byok', orgId)).map((id) => id.toLowerCase())
    if (ids.length) {
      await atomic.update<{ version: string; ids: string[] }>(kv.key('byok-index', orgId), (index) => {
        const known = index?.ids ?? []
        const added = ids.filter((id) => !known.includes(id))
        return added.length ? { version: newId(), ids: [...known, ...added] } : undefined
      })
      orgs++
    }
    await Promise.all([kv.remove('byok-count', orgId), kv.remove('byok-version', orgId)])
  }
  return orgs
}
