// The secrets of the app's runtimeConfig (env NUXT_MODEL_GATEWAY_SECRET, NUXT_MODEL_GATEWAY_PREVIOUS_SECRETS),
// checked as the server starts (docs/adapters.md#nuxt).
import { useRuntimeConfig } from 'nitropack/runtime'
import { ModelGatewayConfigError } from './config-error'
import type { PlatformEvent } from './platform'
import { MIN_SECRET_LENGTH, secretTooShort } from './secret-length'

/** The secret and the former ones of runtimeConfig (the request's on Cloudflare, whose env comes with it), checked; undefined where none is given. */
export function runtimeSecrets(event?: PlatformEvent): { secret: string | undefined; previousSecrets: string[] | undefined } {
  const runtime = useRuntimeConfig(event).modelGateway || {}
  const secret = runtime.secret || undefined
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH)) {
    throw new ModelGatewayConfigError(
      secretTooShort('NUXT_MODEL_GATEWAY_SECRET (runtimeConfig.modelGateway.secret)', String(secret).length, 'start the server'),
    )
  }
  const previous = runtime.previousSecrets
  if (previous !== undefined && !(Array.isArray(previous) && previous.every((value) => typeof value === 'string'))) {
    throw new ModelGatewayConfigError(
      'NUXT_MODEL_GATEWAY_PREVIOUS_SECRETS (runtimeConfig.modelGateway.previousSecrets) must be a JSON array of strings, e.g. ["<former secret>"]',
    )
  }
  return { secret, previousSecrets: previous?.length ? previous : undefined }
}
