import { sha256 } from '../crypto/hash'
import type { H3Event } from 'h3'
import { CHAT_LIMITS } from '../schemas/chat'
import { clientRequestIdOf } from './request-id'

/**
 * What a request says about the app that sent it and how it groups its requests
 * (docs/usage.md#app-attribution-and-grouping-fields): recorded with its generation, reported by GET /generation (and
 * the app by GET /activity's filters). Every value is bounded and cleaned here, whatever the request sent.
 */
export interface GenerationTags {
  /** The gateway's own request id (unique). */
  request_id?: string
  /** The client's own `X-Request-Id`, when it sent one (docs/errors.md#request-and-generation-ids). */
  client_request_id?: string
  /** `HTTP-Referer`: the app's URL. */
  http_referer?: string
  /** An integer id of the app: derived from the origin of `HTTP-Referer` (the same origin, the same id). */
  app_id?: number
  /** `X-OpenRouter-Title`, else `X-Title`: the app's name. */
  app_title?: string
  /** `X-OpenRouter-Categories`: the app's categories (lowercase slugs). */
  app_categories?: string[]
  /** `User-Agent`. */
  user_agent?: string
  /** The request's `session_id`, else the `X-Session-Id` header. */
  session_id?: string
  /** The request's `user` (OpenAI's end-user id). */
  external_user?: string
  /** The request's `trace` (observability: trace_id, span_name, … and custom keys). */
  trace?: Record<string, unknown>
  /** The request's `metadata` (string pairs, as OpenAI's). */
  metadata?: Record<string, string>
  /** What the host's policies decided (docs/policies.md#what-is-recorded); the array grows until the generation is recorded. */
  policies?: Record<string, unknown>[]
}

/**
 * The bounds of docs/usage.md: header text is cut to its bound; a request field beyond its bounds is not recorded
 * (chat refuses it with 400 first: the same bounds, src/schemas/chat.ts).
 */
export const TAG_LIMITS = {
  referer: 512,
  title: 256,
  userAgent: 256,
  categories: 10,
  category: 64,
  sessionId: CHAT_LIMITS.sessionId,
  externalUser: 256,
  metadataPairs: CHAT_LIMITS.metadata,
  metadataKey: CHAT_LIMITS.metadataKey,
  metadataValue: CHAT_LIMITS.metadataValue,
  traceKeys: CHAT_LIMITS.trace,
  traceKey: CHAT_LIMITS.name,
  traceBytes: CHAT_LIMITS.traceBytes,
} as const

const CONTROL_RE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu
const HAS_CONTROL_RE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u
const CATEGORY_RE = /^[a-z0-9][a-z0-9._-]*$/

/** Header bytes sent as UTF-8 arrive as one Latin-1 character each: read them back as UTF-8 when they are. */
function decodeHeader(value: string): string {
  if (!/[\u0080-\u00ff]/.test(value) || /[^\u0000-\u00ff]/.test(value)) return value
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(value, (c) => c.charCodeAt(0)))
  } catch {
    return value
  }
}

/** Text without control or invisible formatting characters, spaces collapsed, cut to `max` characters (code points). */
export function cleanText(value: string, max: number): string | undefined {
  const text = value.replace(CONTROL_RE, ' ').replace(/\s+/g, ' ').trim()
  if (!text) return undefined
  const chars = Array.from(text)
  return chars.length > max ? chars.slice(0, max).join('').trimEnd() : text
}

const header = (headers: Headers, name: string, max: number) => {
  const value = headers.get(name)
  return value === null ? undefined : cleanText(decodeHeader(value), max)
}

/** A stable positive integer id for an app origin (48 bits of its SHA-256). */
export function appIdOf(origin: string): number {
  const hash = sha256(origin)
  return hash.slice(0, 6).reduce((value, byte) => value * 256 + byte, 0)
}

/** The app id of an `HTTP-Referer`: of its origin when it is an http(s) URL, else of the text itself. */
function appIdOfReferer(referer: string): number {
  try {
    const url = new URL(referer)
    if (url.protocol === 'http:' || url.protocol === 'https:') return appIdOf(url.origin)
  } catch {
    // not a URL: the text names the app
  }
  return appIdOf(referer)
}

function categoriesOf(value: string | undefined): string[] | undefined {
  if (!value) return undefined
  const categories = new Set<string>()
  for (const part of value.split(',')) {
    const slug = part.trim().toLowerCase()
    if (slug.length <= TAG_LIMITS.category && CATEGORY_RE.test(slug)) categories.add(slug)
    if (categories.size >= TAG_LIMITS.categories) break
  }
  return categories.size ? [...categories] : undefined
}

const boundedString = (value: unknown, max: number): string | undefined =>
  typeof value === 'string' && value.length > 0 && Array.from(value).length <= max ? value : undefined

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `X-Session-Id`, when it is plain text within the bound (an id is never cut: two sessions would become one). */
function sessionHeader(headers: Headers): string | undefined {
  const value = headers.get('x-session-id')?.trim()
  return value && !HAS_CONTROL_RE.test(value) ? boundedString(value, TAG_LIMITS.sessionId) : undefined
}

/** OpenAI's metadata: at most 16 pairs of a key of at most 64 characters and a string value of at most 512. */
function metadataOf(value: unknown): Record<string, string> | undefined {
  if (!isPlainObject(value)) return undefined
  const entries = Object.entries(value)
  if (entries.length > TAG_LIMITS.metadataPairs) return undefined
  const kept: Record<string, string> = {}
  for (const [key, item] of entries) {
    if (!boundedString(key, TAG_LIMITS.metadataKey) || typeof item !== 'string' || Array.from(item).length > TAG_LIMITS.metadataValue) return undefined
    kept[key] = item
  }
  return entries.length ? kept : undefined
}

/** OpenRouter's trace: an object of at most 32 keys of at most 64 characters, at most 16 KiB of JSON. */
function traceOf(value: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(value)) return undefined
  const keys = Object.keys(value)
  if (!keys.length || keys.length > TAG_LIMITS.traceKeys || !keys.every((key) => boundedString(key, TAG_LIMITS.traceKey))) return undefined
  const json = JSON.stringify(value)
  return Buffer.byteLength(json) <= TAG_LIMITS.traceBytes ? (JSON.parse(json) as Record<string, unknown>) : undefined
}

/**
 * The tags of one generation, from its request's headers and body (JSON or form fields): app attribution
 * (`HTTP-Referer`, `X-OpenRouter-Title` / `X-Title`, `X-OpenRouter-Categories`, `User-Agent`) and the body's
 * `session_id` (else `X-Session-Id`), `user`, `trace` and `metadata`. Absent or unusable values are left out.
 */
export function generationTags(event: H3Event, requestId: string, body?: unknown): GenerationTags {
  return generationTagsOf(event.req.headers, requestId, clientRequestIdOf(event), body)
}

/** generationTags from a request's headers (an in-process call's: docs/first-party.md#the-in-process-client). */
export function generationTagsOf(headers: Headers, requestId: string, clientRequestId: string | undefined, body?: unknown): GenerationTags {
  const fields = isPlainObject(body) ? body : {}
  const referer = header(headers, 'http-referer', TAG_LIMITS.referer)
  const tags: GenerationTags = { request_id: requestId }
  // Only the values present are set (no `delete` afterwards: an object that loses properties becomes a slow dictionary).
  const set = <K extends keyof GenerationTags>(key: K, value: GenerationTags[K] | undefined) => {
    if (value !== undefined) tags[key] = value
  }
  set('client_request_id', clientRequestId)
  set('http_referer', referer)
  set('app_id', referer === undefined ? undefined : appIdOfReferer(referer))
  set('app_title', header(headers, 'x-openrouter-title', TAG_LIMITS.title) ?? header(headers, 'x-title', TAG_LIMITS.title))
  set('app_categories', categoriesOf(header(headers, 'x-openrouter-categories', TAG_LIMITS.categories * (TAG_LIMITS.category + 1))))
  set('user_agent', header(headers, 'user-agent', TAG_LIMITS.userAgent))
  set('session_id', boundedString(fields.session_id, TAG_LIMITS.sessionId) ?? sessionHeader(headers))
  set('external_user', boundedString(fields.user, TAG_LIMITS.externalUser))
  set('trace', traceOf(fields.trace))
  set('metadata', metadataOf(fields.metadata))
  return tags
}
