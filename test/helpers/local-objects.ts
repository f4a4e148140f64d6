import type { DurableObjectNamespaceLike } from '../../src/stores/durable-object-call'
import { ModelGatewayObject } from '../../src/stores/durable-object-server'

/**
 * A namespace of ModelGatewayObjects in this process, each over a Map as its storage (the object's own code, not
 * workerd's), for tests of what calls the objects: test/edge/workers.test.ts runs them in workerd.
 */
export function localNamespace(): DurableObjectNamespaceLike & { keysOf(name: string): string[] } {
  const maps = new Map<string, Map<string, unknown>>()
  const objects = new Map<string, ModelGatewayObject>()
  const objectOf = (name: string) => {
    let object = objects.get(name)
    if (!object) {
      const map = new Map<string, unknown>()
      maps.set(name, map)
      const storage = {
        get: async (key: string) => map.get(key),
        put: async (key: string, value: unknown) => void map.set(key, structuredClone(value)),
        delete: async (key: string) => map.delete(key),
        list: async (options: { prefix?: string } = {}) => new Map([...map].filter(([key]) => key.startsWith(options.prefix ?? '')).sort()),
      }
      objects.set(name, (object = new ModelGatewayObject({ storage })))
    }
    return object
  }
  return {
    idFromName: (name) => name,
    get: (id) => ({ fetch: (url, init) => objectOf(id as string).fetch(new Request(url, init)) }),
    keysOf: (name) => [...(maps.get(name)?.keys() ?? [])].sort(),
  }
}
