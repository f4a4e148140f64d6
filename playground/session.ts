import { createHmac } from 'node:crypto'
import { safeEqual } from '../src/crypto/keys'

const COOKIE = 'playground_session'

/** The playground's demo sign-in: a cookie holding the user id and its HMAC under the secret. */
export function createSessions(secret: string) {
  const sign = (userId: string) => createHmac('sha256', secret).update(`session:${userId}`).digest('base64url')
  return {
    /** A Set-Cookie header signing this user in. */
    cookieFor: (userId: string) => `${COOKIE}=${userId}.${sign(userId)}; Path=/; HttpOnly; SameSite=Lax`,
    /** The signed-in user id of a Cookie header, or null. */
    userOf(cookieHeader: string | null | undefined): string | null {
      const value = cookieHeader
        ?.split(/;\s*/)
        .find((c) => c.startsWith(`${COOKIE}=`))
        ?.slice(COOKIE.length + 1)
      if (!value) return null
      const dot = value.lastIndexOf('.')
      const userId = value.slice(0, dot)
      return dot > 0 && safeEqual(value.slice(dot + 1), sign(userId)) ? userId : null
    },
  }
}

/**
 * Where to go after sign-in: a path on this origin only, never another site (no open redirect). A path a browser
 * could read as another host (`//evil.example`, `/\evil.example`, or those percent-encoded) falls back to `/`.
 */
export function safeReturnPath(value: string | null, origin: string): string {
  if (!value) return '/'
  try {
    const url = new URL(value, origin)
    const path = url.pathname + url.search
    return url.origin === origin && !leadsOffSite(path) ? path : '/'
  } catch {
    return '/'
  }
}

// True when a path starts with two slashes or backslashes in any mix, as sent or after up to three rounds of
// percent-decoding (`/%2F%2Fevil.example`, `/%252F%5Cevil.example`), tabs and line breaks dropped as browsers do.
function leadsOffSite(path: string): boolean {
  let text = path
  for (let round = 0; round <= 3; round++) {
    if (/^[\\/][\\/]/.test(text.replace(/[\t\n\r]/g, ''))) return true
    const decoded = text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    if (decoded === text) return false
    text = decoded
  }
  return true
}
