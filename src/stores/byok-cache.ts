/** Bounds of the per-process cache of listed BYOK credentials (docs/byok.md). */
export interface ListedCacheLimits {
  /** Orgs kept at most. */
  maxEntries: number
  /** Approximate bytes kept at most (the JSON size of the cached records). */
  maxBytes: number
}

/** Default bounds: 10,000 orgs and 32 MiB, whichever comes first. */
export const DEFAULT_LISTED_CACHE_LIMITS: ListedCacheLimits = { maxEntries: 10_000, maxBytes: 32 * 1024 * 1024 }

/**
 * The records an org's credential listing gave, kept for the index version they were read at: a least recently
 * used map bounded in entries and in bytes, so that many orgs with many large credentials cannot grow the heap.
 */
export function createListedCache<T>(limits: ListedCacheLimits = DEFAULT_LISTED_CACHE_LIMITS) {
  const entries = new Map<string, { version: string; records: T[]; bytes: number }>()
  let bytes = 0
  const drop = (orgId: string) => {
    const entry = entries.get(orgId)
    if (!entry) return
    entries.delete(orgId)
    bytes -= entry.bytes
  }
  return {
    /** The records cached for the org at this version, or undefined. */
    get(orgId: string, version: string): T[] | undefined {
      const entry = entries.get(orgId)
      if (!entry || entry.version !== version) return undefined
      entries.delete(orgId) // most recently used last
      entries.set(orgId, entry)
      return entry.records
    },
    /** Caches the org's records at this version, evicting the least recently used orgs past the bounds. */
    set(orgId: string, version: string, records: T[]): void {
      drop(orgId)
      const size = records.reduce((n, record) => n + JSON.stringify(record).length, 0)
      if (size > limits.maxBytes || limits.maxEntries < 1) return
      while (entries.size >= limits.maxEntries || bytes + size > limits.maxBytes) drop(entries.keys().next().value!)
      entries.set(orgId, { version, records, bytes: size })
      bytes += size
    },
    /** Orgs and approximate bytes cached now. */
    size: () => ({ entries: entries.size, bytes }),
  }
}
