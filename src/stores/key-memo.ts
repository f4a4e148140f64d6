/** Keys built once per owner and name, and kept. */
export interface KeyMemo {
  /** The key kept for `owner` and `name`, if any. */
  get(owner: string, name: string): string | undefined
  /** Keeps `key` for `owner` and `name`, and returns it. */
  set(owner: string, name: string, key: string): string
}

/**
 * Storage keys built once per owner (a key's hash, a user's id) and name (a counter's), and kept: every request of the
 * owner names its counters with the same strings, hashed once, instead of building them again (docs/performance.md#where-the-time-goes).
 * At most `maxOwners` owners are kept; past that the memo starts empty again.
 */
export function createKeyMemo(maxOwners = 10_000): KeyMemo {
  const owners = new Map<string, Map<string, string>>()
  return {
    get: (owner, name) => owners.get(owner)?.get(name),
    set(owner, name, key) {
      let names = owners.get(owner)
      if (!names) {
        if (owners.size >= maxOwners) owners.clear()
        owners.set(owner, (names = new Map()))
      }
      names.set(name, key)
      return key
    },
  }
}
