// Random strings for the server runtime, from Web Crypto: the same on Node and in workerd (Nitro's Cloudflare
// presets), with no `node:crypto` import (docs/edge.md#nuxt-on-cloudflare).

/** `bytes` random bytes from Web Crypto. */
const randomBytes = (bytes: number): Uint8Array => crypto.getRandomValues(new Uint8Array(bytes))

/** `bytes` random bytes as lowercase hex. */
export const randomHex = (bytes: number): string => Array.from(randomBytes(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('')

/** `bytes` random bytes as base64url, without padding. */
export const randomBase64url = (bytes: number): string =>
  btoa(String.fromCharCode(...randomBytes(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
