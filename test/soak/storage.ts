// The soak's storages (test/soak/soak.ts): PostgreSQL through postgresDriver({ url }) (a pool that reconnects) at
// DATABASE_URL, or Redis at REDIS_URL, on a table or key base of the run's own.
import { createStorage, type Storage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { postgresDriver } from '../../src/index'

/** Which storage a soak runs on. */
export type SoakStorageKind = 'postgres' | 'redis'

/** Opens the soak's storage: `name` is the PostgreSQL table or the Redis key base. */
export function openSoakStorage(kind: SoakStorageKind, name: string): { storage: Storage; close(): Promise<void> } {
  if (kind === 'postgres') {
    const storage = createStorage({ driver: postgresDriver({ url: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test', tableName: name }) })
    // The driver's pool closes with the storage.
    return { storage, close: () => storage.dispose() }
  }
  const storage = createStorage({ driver: redisDriver({ url: process.env.REDIS_URL || 'redis://127.0.0.1:6379', base: name }) })
  return { storage, close: () => storage.dispose() }
}
