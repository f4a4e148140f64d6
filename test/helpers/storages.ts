import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import memoryDriver from 'unstorage/drivers/memory'
import redisDriver from 'unstorage/drivers/redis'

/** A storage kind under test: `open()` gives one more Storage over the same data (as a second gateway instance would). */
export interface StorageKind {
  name: string
  /** True when the kind is shared by gateway instances in other processes too. */
  shared: boolean
  open(): Storage
  cleanup(): Promise<void>
}

/** In-memory: every opening is the same Storage. */
export function memoryKind(): StorageKind {
  const storage = createStorage({ driver: memoryDriver() })
  return { name: 'memory', shared: false, open: () => storage, cleanup: () => storage.dispose() }
}

/** fs: each opening is a new Storage over one temporary folder. */
export function fsKind(): StorageKind {
  const dir = mkdtempSync(join(tmpdir(), 'mg-fs-'))
  const opened: Storage[] = []
  return {
    name: 'fs',
    shared: false,
    open: () => {
      const storage = createStorage({ driver: fsDriver({ base: dir }) })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      await Promise.all(opened.map((s) => s.dispose()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Redis at REDIS_URL: each opening is a new client, all under one random base. */
export function redisKind(url: string): StorageKind {
  const base = `mg-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const opened: Storage[] = []
  return {
    name: 'redis',
    shared: true,
    open: () => {
      const storage = createStorage({ driver: redisDriver({ url, base }) })
      opened.push(storage)
      return storage
    },
    async cleanup() {
      if (opened[0]) await opened[0].clear()
      await Promise.all(opened.map((s) => s.dispose()))
    },
  }
}
