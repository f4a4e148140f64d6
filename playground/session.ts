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
      const value = cookieHeader?.split(/;\s*/).find((c) => c.startsWith(`${COOKIE}=`))?.slice(COOKIE.length + 1)
      if (!value) return null
      const dot = value.lastIndexOf('.')
      const userId = value.slice(0, dot)
      return dot > 0 && safeEqual(value.slice(dot + 1), sign(userId)) ? userId : null
    },
  }
}

/** Where to go after sign-in: a path on this origin only, never another site (no open redirect). */
export function safeReturnPath(value: string | null, origin: string): string {
  if (!value) return '/'
  try {
    const url = new URL(value, origin)
    return url.origin === origin ? url.pathname + url.search : '/'
  } catch {
    return '/'
  }
}
