import type { Storage } from 'unstorage'
import { isRedisClusterDriver } from './atomic-redis'
import { listOwnKeys } from './records'

/** The part of an ioredis Cluster client listing keys uses. */
interface ClusterClient {
  nodes(role: 'master'): { scan(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]> }[]
}

// A Redis glob that matches `text` literally.
const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`)

/**
 * The storage's keys below `base` (full keys). The gateway's own memory storage is listed straight from its Map
 * (listOwnKeys). On a Redis Cluster every primary is scanned: unstorage's redis driver sends its SCAN to one node
 * only, which holds a third of a cluster's keys (docs/operations.md#redis-cluster).
 */
export async function listKeys(storage: Storage, base: string): Promise<string[]> {
  const own = listOwnKeys(storage, base)
  if (own) return own
  const mount = storage.getMount(base)
  if (!isRedisClusterDriver(mount.driver)) return storage.getKeys(base)
  const client = (mount.driver.getInstance as () => ClusterClient)()
  const driverBase = String((mount.driver.options as { base?: unknown }).base ?? '').replace(/:$/, '')
  const prefix = driverBase ? `${driverBase}:` : ''
  const relative = base.slice(mount.base.length)
  const pattern = `${escapeGlob(prefix + relative)}*`
  const found = new Set<string>()
  await Promise.all(
    client.nodes('master').map(async (node) => {
      let cursor = '0'
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
        cursor = next
        for (const key of keys) found.add(mount.base + key.slice(prefix.length))
      } while (cursor !== '0')
    }),
  )
  return [...found]
}
