import { createGateway, durableObjectStorage, type DurableObjectNamespaceLike, type Gateway, type GatewayOptions } from '../src/edge'

export { ModelGatewayObject, migrateToPerOrg, type PerOrgMigration, type PerOrgMigrationOptions } from '../src/edge'

/** The Worker's handler: `export default workersGateway(…)` (docs/edge.md#cloudflare-workers). */
export interface WorkersHandler<Env> {
  fetch(request: Request, env: Env): Promise<Response>
  /** The isolate's gateway, built from `env` on the first call (its admin API, its in-process client). */
  gateway(env: Env): Gateway
}

/** Where the gateway's Durable Objects are bound: the binding's name in env (default `MODEL_GATEWAY`), the (global) object's name, one object per org or not. */
export interface WorkersGatewayConfig {
  binding?: string
  objectName?: string
  /** One object per org beside the global one (docs/edge.md#one-object-per-org); default false: one object. */
  perOrg?: boolean
}

/**
 * A Worker's `fetch` serving the gateway (docs/edge.md#cloudflare-workers): built once per isolate from the first
 * request's env by `options(env)`, its storage and atomic engine in the Durable Object bound at `binding` unless the
 * options give their own. Export ModelGatewayObject from the Worker too, as the class of that binding.
 */
export function workersGateway<Env extends object>(options: (env: Env) => GatewayOptions, config: WorkersGatewayConfig = {}): WorkersHandler<Env> {
  let gateway: Gateway | undefined
  const build = (env: Env): Gateway => {
    const binding = config.binding ?? 'MODEL_GATEWAY'
    const namespace = (env as Record<string, unknown>)[binding] as DurableObjectNamespaceLike | undefined
    const own = options(env)
    if (!namespace && !own.atomic)
      throw new TypeError(`model-gateway: workers: env.${binding} is not a Durable Object binding (docs/edge.md#cloudflare-workers)`)
    // The object's storage brings its engine: createGateway picks the Durable Object engine for its driver.
    return createGateway({
      ...own,
      ...(namespace && !own.storage && !own.atomic
        ? { storage: durableObjectStorage(namespace, { name: config.objectName, perOrg: config.perOrg, prefix: own.storagePrefix }) }
        : {}),
    })
  }
  return {
    fetch: (request, env) => (gateway ??= build(env)).fetch(request),
    gateway: (env) => (gateway ??= build(env)),
  }
}
