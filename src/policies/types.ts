import type { Capability } from '../contracts'

// The policy hooks a host passes to createGateway (docs/policies.md#policy-hooks): types only, so that the gateway's
// options name them without importing what runs them (docs/development.md#layers).

/** Who a request acts as, as policies see it: the org, the user, the key and the end user it names. */
export interface PolicyPrincipal {
  orgId: string
  userId: string
  /** The first 12 hex digits of the key's SHA-256 (the request log's `key`); a session's key for a host session. */
  key: string
  /** The key's label. */
  keyLabel: string
  /** How the caller authenticated: a bearer key or the host's session (docs/first-party.md). */
  via: 'key' | 'session'
  /** The host's own id of the signed-in user, for a host session (docs/first-party.md#host-users). */
  hostUserId?: string
  /** The end user the request names (OpenRouter's `user`, Messages' `metadata.user_id`). */
  endUser?: string
}

/** What a policy sees of a request before it is served. */
export interface PolicyRequest {
  capability: Capability
  /** The API route, below the base path: `/chat/completions`, `/messages`, `/responses`, `/embeddings`, … */
  route: string
  principal: PolicyPrincipal
  /** The model the request names (after the policies before this one rewrote it). */
  model: string
  /** Its fallback models (`models`), when it names any. */
  models: string[]
  stream: boolean
  /** The request's input text, part by part (messages, system prompt, prompt, input), in order. */
  texts: string[]
  /** The most output tokens it asks for, when it says. */
  maxTokens?: number
  requestId: string
}

/** What a policy sees of a whole answer before it goes out (text-generating routes: chat, Messages, Responses, completions). */
export interface PolicyResponse {
  capability: Capability
  route: string
  principal: PolicyPrincipal
  /** The model that answered. */
  model: string
  /** The answer's text, choice by choice. */
  texts: string[]
  requestId: string
  generationId: string
}

/** How a policy changes a request (each part optional). */
export interface PolicyRewrite {
  /** Replaces the model. */
  model?: string
  /** Replaces the fallback models (`[]` removes them). */
  models?: string[]
  /** Caps the output tokens (the request's own cap when lower). */
  maxTokens?: number
  /** A system message put before the request's own. */
  system?: string
  /** Maps every input text (redaction): the request's messages, system prompt, prompt or input. */
  text?: (text: string) => string
}

/** A policy's decision: allow (nothing, or `{}`), deny with a status and message, or rewrite; `note` is recorded. */
export type PolicyDecision =
  | { deny: { status?: number; message: string; code?: string }; rewrite?: undefined; note?: Record<string, unknown> }
  | { rewrite: PolicyRewrite; deny?: undefined; note?: Record<string, unknown> }
  | { rewrite?: undefined; deny?: undefined; note?: Record<string, unknown> }

/** A whole answer's change: deny it (the answer is replaced by the error), or map its text. */
export type PolicyAnswerDecision =
  | { deny: { status?: number; message: string; code?: string }; text?: undefined; note?: Record<string, unknown> }
  | { text: (text: string) => string; deny?: undefined; note?: Record<string, unknown> }
  | { deny?: undefined; text?: undefined; note?: Record<string, unknown> }

/**
 * A filter of one streamed answer's text: `write` gets each text delta and returns what goes out now (it may hold
 * back the end of it, to act on text split across chunks), `end` what it held back when the choice finishes.
 */
export interface PolicyTextStream {
  write(text: string): string
  end(): string
  /** What is recorded with the generation once the stream ends (counts, never the text). */
  note?(): Record<string, unknown> | undefined
}

/** A policy in the request path (docs/policies.md#policy-hooks): hooks that decide, each optional. */
export interface GatewayPolicy {
  /** Its name, in errors and in the generation's record. */
  name: string
  /** Before the request is planned and held: allow, deny, or rewrite it. */
  request?(request: PolicyRequest): PolicyDecision | undefined | void | Promise<PolicyDecision | undefined | void>
  /** A whole answer, before it is written (it is billed already): allow, deny, or map its text. */
  response?(response: PolicyResponse): PolicyAnswerDecision | undefined | void | Promise<PolicyAnswerDecision | undefined | void>
  /** A streamed answer: a filter of each choice's text, made per choice; none leaves it as it is. */
  stream?(request: PolicyRequest): PolicyTextStream | undefined | void
}

/** One decision as the generation's record keeps it (`policies` in GET /generation). */
export interface PolicyTrailEntry {
  policy: string
  stage: 'request' | 'response' | 'stream'
  action: 'deny' | 'rewrite' | 'note'
  note?: Record<string, unknown>
}
