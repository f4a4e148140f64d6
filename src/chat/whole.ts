import type { GatewayContext } from '../context'
import { estimateTokens } from '../generation/estimate'
import { newGenerationId } from '../generation/id'
import { upstreamError } from '../providers/upstream-error'
import { firstSuccessful } from '../routing/attempts'
import { upstreamRequestFor } from './upstream-request'
import { settle } from './billing'
import type { ChatCompletion, ChatCompletionResult } from './result'
import type { ChatServeInput } from './serve-input'
import { shapeChoice } from './shape'
import type { PolicyRun } from '../policies/run'

/** The provider's own finish reason of a choice (what `native_finish_reason` shows). */
const nativeFinishReasonOf = (choice: { finish_reason?: string | null; native_finish_reason?: unknown } | undefined): string | null =>
  (typeof choice?.native_finish_reason === 'string' ? choice.native_finish_reason : choice?.finish_reason) ?? null

/** Serves a non-streamed chat completion: first successful attempt, billed once, shaped as docs/chat.md#the-answer shows it (but its usage). */
export async function completeWhole(ctx: GatewayContext, input: ChatServeInput): Promise<ChatCompletionResult> {
  const startedAt = ctx.now()
  const {
    result: completion,
    attempt,
    tries,
  } = await firstSuccessful(
    ctx,
    input.attempts,
    { signal: input.signal, abort: input.abort, requestId: input.requestId, org: input.principal.org.id },
    (a, options) => a.offer.provider.chat(upstreamRequestFor(input.request, a), options),
  )
  const generationId = newGenerationId(startedAt)
  const reported = completion.usage
  if (reported && (typeof reported.prompt_tokens !== 'number' || typeof reported.completion_tokens !== 'number')) {
    throw upstreamError(attempt.offer.provider, 'malformed_response', 'usage without token counts')
  }
  const estimated = !reported
  const usage = reported ?? {
    prompt_tokens: estimateTokens(JSON.stringify(input.request.messages).length),
    completion_tokens: estimateTokens(
      completion.choices.reduce((n, c) => n + (c.message.content?.length ?? 0) + JSON.stringify(c.message.tool_calls ?? '').length, 0),
    ),
  }
  const body: ChatCompletion = {
    id: generationId,
    provider: attempt.offer.provider.name,
    object: 'chat.completion',
    created: Math.floor(startedAt / 1000),
    model: attempt.entry.id,
    ...(completion.service_tier !== undefined ? { service_tier: completion.service_tier } : {}),
    system_fingerprint: completion.system_fingerprint ?? null,
    choices: completion.choices.map(shapeChoice),
  }
  // The host's policies read the answer before it is billed, so that their decisions are in its record; a deny is
  // thrown once it is billed (the provider served it: docs/policies.md#policy-hooks).
  let denied: unknown
  if (input.policy?.filtersOutput) {
    try {
      await applyAnswerPolicies(input.policy, body, generationId)
    } catch (error) {
      denied = error
    }
  }
  const billed = await settle(ctx, {
    principal: input.principal,
    attempt,
    request: input.request,
    usage,
    estimated,
    generationId,
    upstreamId: typeof completion.id === 'string' ? completion.id : null,
    stream: false,
    status: 'success',
    startedAt,
    attempts: tries,
    hold: input.hold,
    tags: input.tags,
    nativeFinishReason: nativeFinishReasonOf(completion.choices[0]),
  })
  if (denied !== undefined) throw denied
  return { generationId, completion: body, billed }
}

// The answer's text, choice by choice, through the policies' response hooks (mapped in place; a deny throws).
async function applyAnswerPolicies(policy: PolicyRun, body: ChatCompletion, generationId: string): Promise<void> {
  const withText = body.choices.filter((c) => typeof c.message.content === 'string')
  const texts = await policy.answer(
    withText.map((c) => c.message.content as string),
    { model: body.model, generationId },
  )
  withText.forEach((choice, i) => {
    choice.message.content = texts[i] ?? ''
  })
}
