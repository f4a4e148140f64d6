// What the server runtime reads of a request on Nitro's Cloudflare presets: the Worker's env, which Nitro puts in the
// event's context (docs/edge.md#nuxt-on-cloudflare).

/** A Nitro event as far as the runtime reads it for the platform: `context.cloudflare.env` on Cloudflare presets. */
export interface PlatformEvent {
  readonly context?: { cloudflare?: { env?: Record<string, unknown> } }
}

/** The Worker's env of a request (Nitro's `event.context.cloudflare.env`), else the one Nitro's Cloudflare entry keeps as `globalThis.__env__`. */
export function workerEnv(event: PlatformEvent | undefined): Record<string, unknown> | undefined {
  return event?.context?.cloudflare?.env ?? (globalThis as { __env__?: Record<string, unknown> }).__env__
}
