// util.inspect's own symbol (inspect.custom), named without importing node:util.
const INSPECT = Symbol.for('nodejs.util.inspect.custom')
import { invalidRequest } from '../errors'

/** The header OpenRouter's clients send a request's own provider keys in (`@openrouter/ai-sdk-provider`'s `api_keys`). */
export const PROVIDER_KEYS_HEADER = 'X-Provider-API-Keys'

/** The most the header may hold, in bytes of UTF-8 (docs/byok.md#keys-for-one-request). */
export const MAX_PROVIDER_KEYS_HEADER_BYTES = 8192
/** The most providers one request may give keys for. */
export const MAX_PROVIDER_KEYS = 50

// A provider slug as the header may name it; anything else is never echoed (it could be a key put in the wrong place).
const SLUG_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/
// No control characters: a key goes into an upstream's Authorization header as it is.
const CONTROL_RE = /[\u0000-\u001f\u007f]/

/**
 * A customer's provider key given for one request (docs/byok.md#keys-for-one-request): kept in memory for that request
 * only. The secret is a private field: neither JSON nor `util.inspect` (logs) ever show it.
 */
export class RequestKey {
  readonly #secret: string
  /** The provider's slug the key is for. */
  readonly provider: string

  constructor(provider: string, secret: string) {
    this.provider = provider
    this.#secret = secret
  }

  /** The secret, for the upstream call's Authorization only. */
  secret(): string {
    return this.#secret
  }

  /** What JSON shows of it: the provider, never the secret. */
  toJSON() {
    return { provider: this.provider }
  }

  /** What logs show of it: the provider, never the secret. */
  [INSPECT]() {
    return `RequestKey(${this.provider})`
  }
}

/** A request's own provider keys by provider slug (docs/byok.md#keys-for-one-request). */
export class ProviderKeys {
  readonly #keys: Map<string, RequestKey>

  constructor(keys: RequestKey[]) {
    this.#keys = new Map(keys.map((key) => [key.provider, key]))
  }

  /** The slugs of the providers it has a key for. */
  get providers(): string[] {
    return [...this.#keys.keys()]
  }

  /** The key for a provider, if the request gave one. */
  keyFor(provider: string): RequestKey | undefined {
    return this.#keys.get(provider)
  }

  /** What JSON shows of them: the providers, never the secrets. */
  toJSON() {
    return { providers: this.providers }
  }

  /** What logs show of them: the providers, never the secrets. */
  [INSPECT]() {
    return `ProviderKeys(${this.providers.join(', ')})`
  }
}

const malformed = (why: string) => invalidRequest(`${PROVIDER_KEYS_HEADER}: ${why}`, PROVIDER_KEYS_HEADER)

/**
 * Reads the `X-Provider-API-Keys` header strictly (docs/byok.md#keys-for-one-request): a JSON object of provider slugs to
 * keys, as `@openrouter/ai-sdk-provider` sends it (`JSON.stringify(api_keys)`), at most 8 KiB and 50 providers, each
 * key a non-empty string without control characters. Anything else is a 400 naming the header; no message ever
 * repeats a key. Undefined when the header is absent.
 */
export function parseProviderKeys(value: string | null | undefined): ProviderKeys | undefined {
  if (value === null || value === undefined) return undefined
  if (Buffer.byteLength(value, 'utf8') > MAX_PROVIDER_KEYS_HEADER_BYTES) throw malformed(`at most ${MAX_PROVIDER_KEYS_HEADER_BYTES} bytes`)
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    throw malformed('not JSON; expected an object of provider slugs to keys, such as {"openai":"sk-…"}')
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw malformed('expected an object of provider slugs to keys, such as {"openai":"sk-…"}')
  const entries = Object.entries(parsed)
  if (entries.length > MAX_PROVIDER_KEYS) throw malformed(`keys for at most ${MAX_PROVIDER_KEYS} providers`)
  return new ProviderKeys(
    entries.map(([slug, secret]) => {
      if (!SLUG_RE.test(slug)) throw malformed('a name is not a provider slug (lowercase letters, digits, ".", "_" and "-", at most 64)')
      if (typeof secret !== 'string' || !secret.length || CONTROL_RE.test(secret))
        throw malformed(`the key for ${slug} must be a non-empty string without control characters`)
      return new RequestKey(slug, secret)
    }),
  )
}
