import type { Capability } from '../contracts'
import { errorTypes, GatewayError, type ErrorStatus } from '../errors'
import type { Logger } from '../logger'
import type { Principal } from '../stores/account-types'
import type { GatewayPolicy, PolicyPrincipal, PolicyRequest, PolicyRewrite, PolicyTextStream, PolicyTrailEntry } from './types'
import { rewriteBody, textsOf, type PolicyView } from './views'

// Runs the host's policies on one request (docs/policies.md#policy-hooks): before it is served, on its whole answer
// and on each streamed choice's text; every decision that denies, rewrites or notes something goes into its trail,
// which the generation's record keeps (`policies`).

/** One request's policies once its request hooks ran: what its answer goes through, and the trail of decisions. */
export interface PolicyRun {
  /** The decisions so far, in order; the generation's record keeps them (GET /generation's `policies`). */
  readonly trail: PolicyTrailEntry[]
  /** Whether a policy filters the answer's text (a streamed or whole answer is then served through chat's typed results). */
  readonly filtersOutput: boolean
  /** A whole answer's texts after the response hooks (a deny throws its GatewayError). */
  answer(texts: string[], info: { model: string; generationId: string }): Promise<string[]>
  /**
   * A filter of one streamed choice's text, through every stream hook in order; undefined when none filters. What the
   * filters note is in the trail (one entry per policy, summed over the choices, read when the record is written).
   */
  streamFilter(): PolicyTextStream | undefined
}

/** What running the request hooks takes: the route's capability and path, the caller, the validated body and its view. */
export interface PolicyInput<B> {
  policies: readonly GatewayPolicy[]
  capability: Capability
  route: string
  principal: Principal
  body: B
  view: PolicyView
  requestId: string
  logger?: Logger
}

/** The principal as policies see it. */
export function policyPrincipal(principal: Principal): PolicyPrincipal {
  return {
    orgId: principal.org.id,
    userId: principal.user.id,
    key: principal.key.hash.slice(0, 12),
    keyLabel: principal.key.label,
    via: principal.via ?? 'key',
    ...(principal.user.host_id !== undefined ? { hostUserId: principal.user.host_id } : {}),
    ...(principal.endUser !== undefined ? { endUser: principal.endUser } : {}),
  }
}

// The end user a body names (OpenRouter's `user`, Messages' `metadata.user_id`), when the principal has none yet.
function endUserOf(principal: PolicyPrincipal, body: Record<string, unknown>): PolicyPrincipal {
  if (principal.endUser !== undefined) return principal
  const metadata = body.metadata as Record<string, unknown> | null | undefined
  const named = typeof body.user === 'string' ? body.user : typeof metadata?.user_id === 'string' ? metadata.user_id : undefined
  return named ? { ...principal, endUser: named } : principal
}

// A policy's deny as the error every API renders in its own shape; a status the gateway does not answer becomes 403.
function denied(policy: string, deny: { status?: number; message: string; code?: string }): GatewayError {
  const status = (deny.status !== undefined && deny.status in errorTypes && deny.status >= 400 ? deny.status : 403) as ErrorStatus
  const message = typeof deny.message === 'string' && deny.message ? deny.message.slice(0, 1000) : `Refused by the policy ${policy}.`
  return new GatewayError(status, message, {
    metadata: { reason: 'policy_denied', policy, ...(typeof deny.code === 'string' ? { code: deny.code.slice(0, 64) } : {}) },
  })
}

// A hook that throws (not a GatewayError) is a failure of the host's code: the request fails closed with a 500.
function hookFailed(policy: string, stage: string, error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  return new GatewayError(500, `The policy ${policy} failed in its ${stage} hook.`, { cause: error, metadata: { reason: 'policy_failed', policy } })
}

/**
 * Runs every policy's request hook in order on a request: a deny throws (nothing is held or sent upstream), a rewrite
 * changes the body the next policy and the gateway see. Without policies the body is returned as it is, with no run.
 */
export async function runRequestPolicies<B>(input: PolicyInput<B>): Promise<{ body: B; run?: PolicyRun }> {
  const { policies } = input
  if (policies.length === 0) return { body: input.body }
  const principal = endUserOf(policyPrincipal(input.principal), input.body as Record<string, unknown>)
  const trail: PolicyTrailEntry[] = []
  let body = input.body as Record<string, unknown>
  const requestView = (): PolicyRequest => ({
    capability: input.capability,
    route: input.route,
    principal,
    model: typeof body.model === 'string' ? body.model : '',
    models: Array.isArray(body.models) ? (body.models as string[]) : [],
    stream: body.stream === true,
    texts: textsOf(input.view, body),
    ...(input.view.maxTokens(body) !== undefined ? { maxTokens: input.view.maxTokens(body) } : {}),
    requestId: input.requestId,
  })
  for (const policy of policies) {
    if (!policy.request) continue
    let decision: Awaited<ReturnType<NonNullable<GatewayPolicy['request']>>>
    try {
      decision = await policy.request(requestView())
    } catch (error) {
      throw hookFailed(policy.name, 'request', error)
    }
    if (!decision) continue
    if (decision.deny) {
      input.logger?.info('policy denied a request', { requestId: input.requestId, policy: policy.name, status: decision.deny.status ?? 403 })
      throw denied(policy.name, decision.deny)
    }
    if (decision.rewrite) {
      checkRewrite(policy.name, decision.rewrite)
      body = rewriteBody(input.view, body, decision.rewrite)
      trail.push({ policy: policy.name, stage: 'request', action: 'rewrite', note: { ...rewriteSummary(decision.rewrite), ...decision.note } })
    } else if (decision.note) trail.push({ policy: policy.name, stage: 'request', action: 'note', note: decision.note })
  }
  const streamed = requestView()
  return { body: body as B, run: policyRun(policies, input, principal, trail, streamed) }
}

const MODEL_ID_RE = /^[^\s]{1,256}$/

// A rewrite the gateway can apply: a model id as a request could send it, a positive whole number of tokens, text and
// a text map of the right types; else the policy is at fault (500 policy_failed), as a hook that throws.
function checkRewrite(policy: string, rewrite: PolicyRewrite): void {
  const bad = (what: string) =>
    new GatewayError(500, `The policy ${policy} rewrote the request with an invalid ${what}.`, { metadata: { reason: 'policy_failed', policy } })
  if (rewrite.model !== undefined && (typeof rewrite.model !== 'string' || !MODEL_ID_RE.test(rewrite.model))) throw bad('model')
  if (rewrite.models !== undefined && (!Array.isArray(rewrite.models) || rewrite.models.some((m) => typeof m !== 'string' || !MODEL_ID_RE.test(m))))
    throw bad('models')
  if (rewrite.maxTokens !== undefined && !(Number.isSafeInteger(rewrite.maxTokens) && rewrite.maxTokens > 0)) throw bad('maxTokens')
  if (rewrite.system !== undefined && typeof rewrite.system !== 'string') throw bad('system')
  if (rewrite.text !== undefined && typeof rewrite.text !== 'function') throw bad('text')
}

// What a rewrite changed, for the trail (never the text itself).
function rewriteSummary(rewrite: { model?: string; models?: string[]; maxTokens?: number; system?: string; text?: unknown }): Record<string, unknown> {
  return {
    ...(rewrite.model !== undefined ? { model: rewrite.model } : {}),
    ...(rewrite.models !== undefined ? { models: rewrite.models } : {}),
    ...(rewrite.maxTokens !== undefined ? { max_tokens: rewrite.maxTokens } : {}),
    ...(rewrite.system !== undefined ? { system: true } : {}),
    ...(rewrite.text !== undefined ? { text: true } : {}),
  }
}

function policyRun<B>(
  policies: readonly GatewayPolicy[],
  input: PolicyInput<B>,
  principal: PolicyPrincipal,
  trail: PolicyTrailEntry[],
  request: PolicyRequest,
): PolicyRun {
  const streaming = policies.filter((p) => p.stream)
  const answering = policies.filter((p) => p.response)
  // The filters made for the stream's choices, by policy; each policy's trail entry sums their notes when read.
  const made = new Map<string, PolicyTextStream[]>()
  return {
    trail,
    filtersOutput: streaming.length > 0 || answering.length > 0,
    async answer(texts, info) {
      let current = texts
      for (const policy of answering) {
        let decision: Awaited<ReturnType<NonNullable<GatewayPolicy['response']>>>
        try {
          decision = await policy.response!({
            ...info,
            capability: input.capability,
            route: input.route,
            principal,
            texts: current,
            requestId: input.requestId,
          })
        } catch (error) {
          throw hookFailed(policy.name, 'response', error)
        }
        if (!decision) continue
        if (decision.deny) {
          trail.push({ policy: policy.name, stage: 'response', action: 'deny', ...(decision.note ? { note: decision.note } : {}) })
          throw denied(policy.name, decision.deny)
        }
        if (decision.text) {
          const map = decision.text
          current = current.map((t) => map(t))
          trail.push({ policy: policy.name, stage: 'response', action: 'rewrite', ...(decision.note ? { note: decision.note } : {}) })
        } else if (decision.note) trail.push({ policy: policy.name, stage: 'response', action: 'note', note: decision.note })
      }
      return current
    },
    streamFilter() {
      const filters: PolicyTextStream[] = []
      for (const policy of streaming) {
        const filter = policy.stream!(request)
        if (!filter) continue
        filters.push(filter)
        let mine = made.get(policy.name)
        if (!mine) {
          mine = []
          made.set(policy.name, mine)
          trail.push(streamEntry(policy.name, mine))
        }
        mine.push(filter)
      }
      return filters.length ? chained(filters) : undefined
    },
  }
}

// A policy's stream entry in the trail: its note sums what its filters note (numbers added), read when it is written.
function streamEntry(policy: string, filters: PolicyTextStream[]): PolicyTrailEntry {
  const entry: PolicyTrailEntry = { policy, stage: 'stream', action: 'note' }
  Object.defineProperty(entry, 'note', {
    enumerable: true,
    get() {
      const sum: Record<string, unknown> = {}
      for (const filter of filters)
        for (const [k, v] of Object.entries(filter.note?.() ?? {}))
          sum[k] = typeof v === 'number' && typeof sum[k] === 'number' ? (sum[k] as number) + v : (sum[k] ?? v)
      return sum
    },
  })
  return entry
}

// Filters applied one after the other: what the first lets out now goes into the second, and so on.
function chained(filters: PolicyTextStream[]): PolicyTextStream {
  if (filters.length === 1) return filters[0]!
  return {
    write(text) {
      let out = text
      for (const f of filters) out = f.write(out)
      return out
    },
    end() {
      let out = ''
      for (const f of filters) out = f.write(out) + f.end()
      return out
    },
  }
}

/** A request's tags with its policies' trail, which its generation's record keeps (the same array: later decisions join it). */
export function withPolicyTrail<T extends object>(tags: T, run: PolicyRun | undefined): T {
  return run ? Object.assign(tags, { policies: run.trail as unknown as Record<string, unknown>[] }) : tags
}
