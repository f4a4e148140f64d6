import { defineDriver } from 'unstorage'

/** The part of a Durable Object's storage (`ctx.storage`) the gateway's records use. */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>
  put(key: string, value: unknown): Promise<void>
  delete(key: string): Promise<boolean>
  list(options?: { prefix?: string }): Promise<Map<string, unknown>>
}

// A record with a time to live (PKCE codes) is kept with its expiry and read as absent once it passed.
interface Expiring {
  $expires: number
  value: unknown
}
const isExpiring = (stored: unknown): stored is Expiring => typeof stored === 'object' && stored !== null && '$expires' in stored
const live = (stored: unknown, now: number) => (isExpiring(stored) ? (stored.$expires > now ? stored.value : undefined) : stored)

/**
 * An unstorage driver over a Durable Object's own storage, used inside the object: the records and the engines'
 * counters and holds live there (docs/edge.md#the-durable-object-engine). Honours `ttl` (seconds) on setItem.
 */
export const durableObjectStateDriver = defineDriver((storage: DurableObjectStorageLike) => {
  const getItem = async (key: string) => {
    const value = live(await storage.get(key), Date.now())
    return value === undefined ? null : value
  }
  return {
    name: 'durable-object-state',
    async hasItem(key) {
      return (await getItem(key)) !== null
    },
    getItem,
    async setItem(key, value, options) {
      const ttl = (options as { ttl?: number } | undefined)?.ttl
      await storage.put(key, ttl ? ({ $expires: Date.now() + ttl * 1000, value } satisfies Expiring) : value)
    },
    async removeItem(key) {
      await storage.delete(key)
    },
    async getKeys(base) {
      const now = Date.now()
      const found = await storage.list(base ? { prefix: base } : {})
      return [...found].filter(([, stored]) => live(stored, now) !== undefined).map(([key]) => key)
    },
    async clear(base) {
      for (const key of (await storage.list(base ? { prefix: base } : {})).keys()) await storage.delete(key)
    },
  }
})
