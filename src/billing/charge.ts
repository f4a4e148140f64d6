import type { GatewayContext } from '../context'
import { normalizeFinishReason } from '../generation/finish-reason'
import type { GenerationTags } from '../http/attribution'
import type { Attempt } from '../routing/plan'
import type { Principal } from '../stores/account-types'
import type { UsageRecord } from '../stores/usage'
import { assessByokFee } from './byok-fees'
import type { RequestCost } from './cost'
import { fromUnits } from './money'
import { isoTime } from '../runtime/iso-time'
import { rollupCounters } from './rollup-counters'
import type { Hold } from './holds'
import { RecordNotWrittenError } from '../stores/record-not-written'

/** A usage record before the money fields that charging fills in. */
export type UsageFacts = Omit<
  UsageRecord,
  'cost' | 'cost_eur' | 'is_byok' | 'upstream_inference_cost' | 'credential_id' | 'upstream_cost_eur' | 'byok_counted' | 'byok_free'
>

/** What a request owes once charged (docs/money.md): in the pricing currency and in EUR, ledger units; BYOK: the fee. */
export interface Charged {
  units: bigint
  eurUnits: bigint
  byok: boolean
}

/** What is known of a served request whatever its endpoint, when it is billed. */
export interface RequestOutcome {
  principal: Principal
  attempt: Attempt
  generationId: string
  upstreamId: string | null
  stream: boolean
  status: UsageRecord['status']
  startedAt: number
  attempts: number
  /** The request's hold on credits, replaced by its charge. */
  hold: Hold
  /** The request's app attribution and grouping fields, recorded with it (docs/usage.md). */
  tags?: GenerationTags
  /** When the first chunk of a stream arrived (the clock's ms); a whole answer: when it is billed. */
  firstChunkAt?: number
  /** Chat: the provider's own finish reason, when it gave one. */
  nativeFinishReason?: string | null
}

/** The usage record's fields that describe the request itself (who, what, how it ended, when), for any endpoint. */
export function requestFacts(ctx: GatewayContext, input: RequestOutcome) {
  const now = ctx.now()
  const latency = Math.max(0, now - input.startedAt)
  const native = input.nativeFinishReason ?? null
  // One literal, then the few tags: an object built by Object.assign over many fields becomes a dictionary on Node 20,
  // slow to copy and to serialise (bench/README.md#object-literals-on-node-20).
  const facts = {
    id: input.generationId,
    org_id: input.principal.org.id,
    user_id: input.principal.user.id,
    end_user: input.principal.endUser ?? null,
    via: input.principal.via ?? 'key',
    key_hash: input.principal.key.hash,
    model: input.attempt.entry.id,
    provider: input.attempt.offer.provider.slug,
    provider_name: input.attempt.offer.provider.name,
    upstream_id: input.upstreamId,
    stream: input.stream,
    status: input.status,
    latency_ms: latency,
    first_token_ms: input.firstChunkAt === undefined ? latency : Math.min(latency, Math.max(0, input.firstChunkAt - input.startedAt)),
    finish_reason: input.status === 'error' ? 'error' : normalizeFinishReason(native),
    native_finish_reason: native,
    attempts: input.attempts,
    created_at: isoTime(now),
  }
  const tags = input.tags as Record<string, unknown> | undefined
  for (const name in tags) (facts as Record<string, unknown>)[name] = tags[name]
  return facts as typeof facts & GenerationTags
}

/**
 * A usage record from its facts and what was charged: one object literal with the fields every record has, then the
 * facts' others (tags, an endpoint's own) and BYOK's, so that the record stays a fast object for its JSON and its
 * readers (an Object.assign of its ~40 fields made it a dictionary: bench/README.md#object-literals-on-node-20).
 */
function usageRecordOf(
  facts: UsageFacts,
  money: { cost: string; cost_eur: string; is_byok: boolean; upstream_inference_cost: string },
  byok?: { credential_id: string; upstream_cost_eur: string; byok_counted: boolean; byok_free: boolean },
): UsageRecord {
  const record: UsageRecord = {
    id: facts.id,
    org_id: facts.org_id,
    user_id: facts.user_id,
    end_user: facts.end_user,
    via: facts.via,
    key_hash: facts.key_hash,
    endpoint: facts.endpoint,
    model: facts.model,
    provider: facts.provider,
    provider_name: facts.provider_name,
    upstream_id: facts.upstream_id,
    stream: facts.stream,
    status: facts.status,
    prompt_tokens: facts.prompt_tokens,
    completion_tokens: facts.completion_tokens,
    cached_tokens: facts.cached_tokens,
    cache_write_tokens: facts.cache_write_tokens,
    reasoning_tokens: facts.reasoning_tokens,
    usage_estimated: facts.usage_estimated,
    currency: facts.currency,
    cost: money.cost,
    cost_eur: money.cost_eur,
    is_byok: money.is_byok,
    upstream_inference_cost: money.upstream_inference_cost,
    latency_ms: facts.latency_ms,
    first_token_ms: facts.first_token_ms,
    finish_reason: facts.finish_reason,
    native_finish_reason: facts.native_finish_reason,
    attempts: facts.attempts,
    created_at: facts.created_at,
  }
  // The facts' other fields (tags, an endpoint's own), after those the literal has.
  const all = record as unknown as Record<string, unknown>
  for (const name in facts) if (!Object.hasOwn(all, name)) all[name] = (facts as unknown as Record<string, unknown>)[name]
  if (byok) {
    record.credential_id = byok.credential_id
    record.upstream_cost_eur = byok.upstream_cost_eur
    record.byok_counted = byok.byok_counted
    record.byok_free = byok.byok_free
  }
  return record
}

// The platform fee a BYOK request owes; when the storage cannot count it against the period's free allowance (it is
// down: the settlement is then kept and tried again), the request is taken as within the allowance, no fee, and a
// warning names it, so the customer never pays for the gateway's outage (docs/byok.md#fees-and-settlement).
async function byokFeeOrFree(ctx: GatewayContext, orgId: string, cost: RequestCost, counted: boolean, generationId: string) {
  try {
    return await assessByokFee(ctx, orgId, cost, counted)
  } catch (error) {
    ctx.logger.warn('the BYOK free allowance could not be counted; this request owes no platform fee', {
      org_id: orgId,
      generation_id: generationId,
      error: (error as Error).message,
    })
    return { free: true, units: 0n, eurUnits: 0n }
  }
}

/**
 * Charges a priced request and records it (docs/money.md): with the service's key the cost replaces the request's
 * hold on credits (and on the key's credit limits) in one step; with a customer's key (BYOK) the hold is released and
 * only the platform fee is owed, pending until settlement. Never throws for a storage failure (the provider has served
 * the request): it logs what to reconcile. Returns what the request owes, in the pricing currency and in EUR.
 */
export async function chargeAndRecord(
  ctx: GatewayContext,
  input: { principal: Principal; attempt: Attempt; cost: RequestCost; facts: UsageFacts; hold: Hold },
): Promise<Charged> {
  const { principal, attempt, cost, facts, hold } = input
  const byok = attempt.credential !== undefined
  const counted = byok && facts.status === 'success'
  const fee = byok ? await byokFeeOrFree(ctx, principal.org.id, cost, counted, facts.id) : undefined
  const owed = fee ? { units: fee.units, eurUnits: fee.eurUnits } : { units: cost.units, eurUnits: cost.eurUnits }
  const record = usageRecordOf(
    facts,
    { cost: fromUnits(owed.units), cost_eur: fromUnits(owed.eurUnits), is_byok: byok, upstream_inference_cost: fromUnits(cost.units) },
    byok ? { credential_id: attempt.credential!.id, upstream_cost_eur: fromUnits(cost.eurUnits), byok_counted: counted, byok_free: fee!.free } : undefined,
  )
  // The day's rollups behind GET /activity (docs/usage.md), added by the settlement's own step: the usage record and its
  // rollups count together. Finding the day's entry may fail (storage unreachable): the charge goes on without them.
  const found = rollupCounters(ctx, record, { model_permaslug: attempt.entry.view.canonical_slug || record.model, provider_name: attempt.offer.provider.name })
  const rollups = Array.isArray(found) ? found : await found
  // A customer's key: the org is charged the fee later; the key's usage counts the fee and its BYOK usage the upstream cost (docs/keys.md).
  const charged = byok ? 0n : cost.eurUnits
  // The charge's ledger entry and the usage record (docs/money.md) are written by the settlement's own atomic step: the
  // ledger never shows a charge that was not made, never misses one that was, and a process killed meanwhile leaves
  // either the charge with its records or neither (the hold then expires).
  const ledger = charged > 0n ? ctx.credits.chargeEntry(record.org_id, charged, `${record.endpoint} ${record.model}`, record.id) : undefined
  // A counted BYOK request's pending fee is written in that step too: a process killed after it leaves no fee unnoted.
  const written = ctx.usage.entriesOf(record)
  if (ledger) written.unshift({ key: ledger.key, value: ledger.entry })
  if (counted) written.push(...ctx.byokFees.pendingEntries(principal.org.id, record.id, fromUnits(fee!.eurUnits)))
  try {
    // Once: the generation pointer (written by the step) says it ran, so a resent or retried step charges nothing more.
    // The provider's tokens count against the tokens limits (docs/limits.md#tokens-spend-and-requests-in-flight).
    const tokens = (record.prompt_tokens ?? 0) + (record.completion_tokens ?? 0)
    await hold.settle(charged, {
      byok: byok ? { feeEurUnits: fee!.eurUnits, upstreamEurUnits: cost.eurUnits } : undefined,
      records: written,
      once: ctx.usage.pointerKey(record),
      tokens,
      counters: rollups,
    })
  } catch (error) {
    if (error instanceof RecordNotWrittenError) {
      // The money is exact in the counters; only the ledger entry or the usage record is missing (never retried into a second charge).
      ctx.logger.error('a request was charged but its ledger entry or usage record could not be written: add it by hand', {
        org_id: record.org_id,
        amount: ledger?.entry.amount,
        note: ledger?.entry.note,
        generation_id: record.id,
        at: ledger?.entry.at,
        error: (error.cause as Error)?.message ?? String(error.cause),
      })
    } else ctx.logger.error('billing failed: charge this request by hand', { record, ledger: ledger?.entry, error: (error as Error).message })
  }
  ctx.metrics?.billed({
    model: record.model,
    provider: record.provider,
    prompt_tokens: record.prompt_tokens,
    completion_tokens: record.completion_tokens,
    cost_eur: record.cost_eur,
    first_token_ms: record.first_token_ms,
    status: record.status,
  })
  ctx.requestLog.note(record.request_id, {
    generation_id: record.id,
    model: record.model,
    provider: record.provider,
    stream: record.stream,
    prompt_tokens: record.prompt_tokens,
    completion_tokens: record.completion_tokens,
    cost_eur: record.cost_eur,
    billed_status: record.status,
  })
  return { units: owed.units, eurUnits: owed.eurUnits, byok }
}
