/** The built-in modules the gateway reads through nodeBuiltin, by name. */
export interface NodeBuiltins {
  'node:crypto': typeof import('node:crypto')
  'node:events': typeof import('node:events')
  'node:fs': typeof import('node:fs')
  'node:http': typeof import('node:http')
  'node:https': typeof import('node:https')
  'node:fs/promises': typeof import('node:fs/promises')
  'node:os': typeof import('node:os')
  'node:path': typeof import('node:path')
  'node:util': typeof import('node:util')
}

type GetBuiltin = (name: string) => unknown
const getBuiltin = (globalThis as { process?: { getBuiltinModule?: GetBuiltin } }).process?.getBuiltinModule

/**
 * Node's built-in module `name` where the runtime has one (Node ≥ 20.16, Bun, Deno, workerd with nodejs_compat), else
 * undefined: read when called, so that no module of the core imports `node:` and the edge entry runs without it
 * (docs/edge.md#what-the-edge-entry-leaves-out).
 */
export function nodeBuiltin<N extends keyof NodeBuiltins>(name: N): NodeBuiltins[N] | undefined {
  return getBuiltin?.(name) as NodeBuiltins[N] | undefined
}

/** Node's built-in module `name`, or a TypeError naming `feature` as one that needs Node (docs/edge.md#what-the-edge-entry-leaves-out). */
export function requireNodeBuiltin<N extends keyof NodeBuiltins>(name: N, feature: string): NodeBuiltins[N] {
  const module = nodeBuiltin(name)
  if (!module) throw new TypeError(`model-gateway: ${feature} needs Node's ${name}, which this runtime lacks (docs/edge.md#what-the-edge-entry-leaves-out)`)
  return module
}
