import { createHmac } from 'node:crypto'
import { safeEqual } from '../src/crypto/keys'

/** A cookie holding a value and its HMAC under the secret, for one purpose (its name, and the HMAC's domain). */
function signedCookie(secret: string, name: string, purpose: string) {
  const sign = (value: string) => createHmac('sha256', secret).update(`${purpose}:${value}`).digest('base64url')
  return {
    /** A Set-Cookie header holding this value, signed. */
    set: (value: string) => `${name}=${value}.${sign(value)}; Path=/; HttpOnly; SameSite=Lax`,
    /** A Set-Cookie header removing the cookie. */
    clear: () => `${name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`,
    /** The signed value of a Cookie header, or null (missing, or its signature is not ours). */
    read(cookieHeader: string | null | undefined): string | null {
      const cookie = cookieHeader
        ?.split(/;\s*/)
        .find((c) => c.startsWith(`${name}=`))
        ?.slice(name.length + 1)
      if (!cookie) return null
      const dot = cookie.lastIndexOf('.')
      const value = cookie.slice(0, dot)
      return dot > 0 && safeEqual(cookie.slice(dot + 1), sign(value)) ? value : null
    },
  }
}

/** The playground's demo sign-in: a cookie holding the user id and its HMAC under the secret. */
export function createSessions(secret: string) {
  const cookie = signedCookie(secret, 'playground_session', 'session')
  return {
    /** A Set-Cookie header signing this user in. */
    cookieFor: (userId: string) => cookie.set(userId),
    /** The signed-in user id of a Cookie header, or null. */
    userOf: (cookieHeader: string | null | undefined): string | null => cookie.read(cookieHeader),
  }
}

/**
 * The team demo's sign-in (playground/team.ts): a second cookie naming the host's own user (one of the team's
 * members), which the gateway's `session` option reads (docs/first-party.md#session-principals).
 */
export function createTeamSessions(secret: string) {
  const cookie = signedCookie(secret, 'playground_team', 'team')
  return {
    /** A Set-Cookie header signing this host user in. */
    cookieFor: (hostId: string) => cookie.set(hostId),
    /** A Set-Cookie header signing out. */
    signOutCookie: () => cookie.clear(),
    /** The signed-in host user id of a Cookie header, or null. */
    hostIdOf: (cookieHeader: string | null | undefined): string | null => cookie.read(cookieHeader),
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
