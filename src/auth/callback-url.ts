import { invalidRequest } from '../errors'

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/** Checks a PKCE callback_url (docs/pkce.md#callback-urls): absolute https (http only on loopback), no user info, no fragment, allowed origin. */
export function assertSafeCallbackUrl(value: string, allowedOrigins: string[] | undefined, param = 'callback_url'): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw invalidRequest(`${param}: must be an absolute URL`, param)
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw invalidRequest(`${param}: must use https (http only for localhost, 127.0.0.1 and [::1])`, param)
  }
  if (url.username || url.password) throw invalidRequest(`${param}: must not contain user info`, param)
  if (value.includes('#')) throw invalidRequest(`${param}: must not contain a fragment`, param)
  if (allowedOrigins?.length && !allowedOrigins.includes(url.origin)) {
    throw invalidRequest(`${param}: origin ${url.origin} is not allowed on this gateway`, param)
  }
  return url
}
