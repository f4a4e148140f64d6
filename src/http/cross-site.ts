import type { H3Event } from 'h3'
import { GatewayError } from '../errors'

// What a browser says of where a request comes from (Fetch Metadata): the gateway's own pages, or typed by the user.
const SAME = new Set(['same-origin', 'none'])

/**
 * Refuses (403) a request that changes state with the host's session cookie from another site's page
 * (docs/first-party.md#cross-site-requests): a browser's `Sec-Fetch-Site` must say `same-origin` (or `none`), else its
 * `Origin` must be the gateway's own origin or a trusted one. A request with neither header is not a browser's
 * cross-site request (browsers send `Origin` on every cross-origin POST) and passes.
 */
export function assertSameSite(event: H3Event, ownOrigin: string | undefined, trusted: ReadonlySet<string>): void {
  const method = event.req.method
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return
  const site = event.req.headers.get('sec-fetch-site')
  const origin = event.req.headers.get('origin')
  if (site && SAME.has(site)) return
  if (!site && !origin) return
  if (origin && origin !== 'null' && (origin === (ownOrigin ?? event.url.origin) || trusted.has(origin.toLowerCase()))) return
  throw new GatewayError(
    403,
    `Cross-site request refused: a request that acts through the site's session must come from its own pages${origin ? ` (this one came from ${origin})` : ''}; other sites' pages call the API with a key`,
    { metadata: { reason: 'cross_site_session_request' } },
  )
}
