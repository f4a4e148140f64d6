import type { H3Event } from 'h3'

// Absolute links the gateway builds (the RSS feed, the sign-in return address) take their origin from the
// `publicUrl` option when it is set, never from the request's Host header (docs/configuration.md).

/** The `publicUrl` option as an origin (`https://gw.example`); a TypeError unless it is an absolute http(s) URL without path, query or fragment. */
export function resolvePublicUrl(value: unknown): string | undefined {
  if (value === undefined) return undefined
  const fail = () =>
    new TypeError('model-gateway: `publicUrl` must be an absolute http(s) URL without path, query or fragment, such as "https://gateway.example"')
  if (typeof value !== 'string' || /[?#]/.test(value)) throw fail()
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw fail()
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.pathname !== '/') throw fail()
  return url.origin
}

/** What the links read of a gateway (its context is one): the resolved `publicUrl` option. */
export interface PublicUrlSource {
  options: { publicUrl?: string }
}

/** The origin absolute links are built on: the configured `publicUrl`, else the request's own. */
export function publicOrigin(ctx: PublicUrlSource, event: H3Event): string {
  return ctx.options.publicUrl ?? event.url.origin
}

/** The request's URL (path and query) on the public origin. */
export function publicHref(ctx: PublicUrlSource, event: H3Event): string {
  return ctx.options.publicUrl ? `${ctx.options.publicUrl}${event.url.pathname}${event.url.search}` : event.url.href
}
