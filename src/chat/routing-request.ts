import type { RoutingRequest } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import { maxPromptTokens } from './max-cost'

// Request fields that are model parameters, for provider.require_parameters (OpenRouter's names).
const PARAMETERS = [
  'tools',
  'tool_choice',
  'response_format',
  'temperature',
  'top_p',
  'top_k',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'min_p',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'reasoning',
  'parallel_tool_calls',
] as const

/** A chat request as routing sees it. */
export const chatRouting = (request: ChatRequest): RoutingRequest => ({
  capability: 'chat',
  model: request.model,
  models: request.models,
  provider: request.provider,
  parameters: usedParameters(request),
  promptTokens: maxPromptTokens(request),
})

/** The parameters a request uses (those a model must support when `provider.require_parameters` is set). */
export function usedParameters(request: ChatRequest): string[] {
  const used: string[] = PARAMETERS.filter((name) => (request as Record<string, unknown>)[name] != null)
  if (request.response_format?.type === 'json_schema') used.push('structured_outputs')
  return used
}
