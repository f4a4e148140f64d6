// The gateway's storage on Nitro's Cloudflare presets: the Durable Object bound in the Worker's env
// (ModelGatewayObject, exported from the built worker by the module), whose storage brings its atomic engine
// (docs/edge.md#nuxt-on-cloudflare). Imported only on those presets, through `#model-gateway/app`.
import { durableObjectStorage, type DurableObjectNamespaceLike } from 'model-gateway/edge'
import type { Storage } from 'unstorage'
import { ModelGatewayConfigError } from './config-error'
import { type PlatformEvent, workerEnv } from './platform'

/** `modelGateway.cloudflare` of nuxt.config: the binding's name in env, the (global) object's name, one object per org or not. */
export interface CloudflareOptions {
  binding: string
  objectName?: string
  /** One object per org beside the global one (docs/edge.md#one-object-per-org); default false. */
  perOrg?: boolean
}

/**
 * The records' storage in the Durable Object bound at `binding` in the request's env (with `perOrg`, sharded by org
 * under the gateway's `prefix`, its storagePrefix); a configuration error naming the binding without one.
 */
export function cloudflareStorage(event: PlatformEvent | undefined, { binding, objectName, perOrg }: CloudflareOptions, prefix?: string): Storage {
  const env = workerEnv(event)
  if (!env) {
    throw new ModelGatewayConfigError(
      'on Cloudflare the gateway is created on a request, whose env has its Durable Object: call useModelGateway(event) in a request the first time',
    )
  }
  const namespace = env[binding] as DurableObjectNamespaceLike | undefined
  if (typeof namespace?.idFromName !== 'function') {
    throw new ModelGatewayConfigError(
      `env.${binding} is not a Durable Object binding: bind the class ModelGatewayObject as ${binding} in wrangler.toml (modelGateway.cloudflare.binding names another)`,
    )
  }
  return durableObjectStorage(namespace, { name: objectName, perOrg, prefix })
}
