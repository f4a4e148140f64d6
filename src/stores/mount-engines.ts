import type { Driver, Storage } from 'unstorage'
import { isOwnedStorage } from './records'

/**
 * The engine of the mount a key is on (a Redis script engine, or an in-process one), created once per mount by
 * `create`. The gateway's own storage has one mount, which nobody changes: its engine is found once, without a mount
 * lookup per call (docs/operations.md#storage).
 */
export function mountEngines<E>(storage: Storage, create: (driver: Driver, key: string) => E): (key: string) => E {
  const engines = new Map<string, E>()
  const engineOf = (key: string): E => {
    const mount = storage.getMount(key)
    let engine = engines.get(mount.base)
    if (!engine) engines.set(mount.base, (engine = create(mount.driver, key)))
    return engine
  }
  if (!isOwnedStorage(storage)) return engineOf
  let only: E | undefined
  return (key) => (only ??= engineOf(key))
}
