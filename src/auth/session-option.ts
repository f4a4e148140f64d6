import type { ResolvedOptions, SessionOptions } from '../options'

/** Checks the `session` option at creation: a `user` function, and trusted origins as `scheme://host[:port]`. */
export function resolveSessionOption(option: SessionOptions | undefined): ResolvedOptions['session'] {
  if (option === undefined) return undefined
  if (!option || typeof option.user !== 'function') throw new TypeError('model-gateway: `session.user` must be a function of the request')
  const trustedOrigins = new Set<string>()
  for (const origin of option.trustedOrigins ?? []) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (!parsed || parsed.origin === 'null' || parsed.origin !== origin.toLowerCase().replace(/\/$/, ''))
      throw new TypeError(`model-gateway: session.trustedOrigins: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path)`)
    trustedOrigins.add(parsed.origin)
  }
  return { ...option, trustedOrigins }
}
