// The options every gateway of the soak runs with (the instances and the auditor), over one storage.
import type { Storage } from 'unstorage'
import { type GatewayOptions, openaiCompatible } from '../../src/index'

/** The soak's secret: every instance must share it (BYOK credentials are sealed with it). */
export const SOAK_SECRET = 'soak-secret-soak-secret-soak-secret-0123456'
/** The model every chat of the soak asks for. */
export const SOAK_MODEL = 'fake/soak'
/** A request's hold left by a killed instance stops counting after this long. */
export const SOAK_HOLD_TTL_SECONDS = 4
/** Every key's rate limit (held across instances). */
export const SOAK_RATE_LIMIT = { requests: 40, windowSeconds: 2 }

/** The gateway options of the soak: one BYOK-capable OpenAI-compatible provider at `upstreamUrl`. */
export function soakOptions(storage: Storage, upstreamUrl: string): GatewayOptions {
  return {
    storage,
    secret: SOAK_SECRET,
    logger: false,
    holdTtlSeconds: SOAK_HOLD_TTL_SECONDS,
    rateLimits: { key: SOAK_RATE_LIMIT },
    byok: { freeRequestAllowance: 0, platformFeeRate: '0.05', settlementIntervalSeconds: 0 },
    providers: [
      openaiCompatible({
        slug: 'fake',
        name: 'Fake',
        baseURL: upstreamUrl,
        apiKey: 'sk-soak-service',
        byokSupported: true,
        models: [{ id: SOAK_MODEL, upstreamId: 'slow', name: 'Soak', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }],
      }),
    ],
  }
}
