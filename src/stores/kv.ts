import type { Storage } from 'unstorage'
import { listKeys } from './list-keys'
import { createRecords } from './records'

/** The gateway's view of an unstorage Storage: every key lives under one prefix. */
export interface Kv {
  /** The host's storage. */
  readonly storage: Storage
  /** The full storage key of a gateway key (`gateway:keys:…`). */
  key(...parts: string[]): string
  /** Reads a JSON record, or null. */
  get<T>(...parts: string[]): Promise<T | null>
  /** Writes a JSON record. */
  set(value: unknown, ...parts: string[]): Promise<void>
  /** Removes a record. */
  remove(...parts: string[]): Promise<void>
  /** Lists the keys below a prefix, relative to that prefix. */
  list(...parts: string[]): Promise<string[]>
}

/** Creates the prefixed record helpers over a Storage. */
export function createKv(storage: Storage, prefix: string): Kv {
  // The non-empty parts after the prefix, joined by colons (a loop: it runs several times per request).
  const key = (...parts: string[]) => {
    let out = prefix
    for (const part of parts) if (part) out = out ? `${out}:${part}` : part
    return out
  }
  const records = createRecords(storage)
  return {
    storage,
    key,
    get: <T>(...parts: string[]) => records.get<T>(key(...parts)),
    set: (value, ...parts) => records.set(key(...parts), value),
    remove: (...parts) => records.remove(key(...parts)),
    async list(...parts) {
      const base = `${key(...parts)}:`
      const keys = await listKeys(storage, base)
      return keys.map((k) => (k.startsWith(base) ? k.slice(base.length) : k))
    },
  }
}
