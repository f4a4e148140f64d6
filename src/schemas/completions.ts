import * as v from 'valibot'
import { chatRequestSchema, usageSchema } from './chat'
import { int } from './common'

/*
 * POST /completions (docs/completions.md): OpenAI's legacy Completions request, served as a chat request with one
 * user message holding the prompt. It takes every field of a chat request but those of chat alone (`messages`,
 * tools, chat's logprobs), and refuses with a 400 what cannot be served through chat: several
 * prompts or token ids, `suffix`, `echo`, `logprobs`, `best_of` above 1.
 */

// Chat's own fields, which a text completion has no use for: a 400 naming the field when sent.
const chatOnly = v.optional(v.never('is a chat field: /completions takes a prompt (send it to /chat/completions)'))

const {
  messages: _messages,
  tools: _tools,
  tool_choice: _toolChoice,
  parallel_tool_calls: _parallelToolCalls,
  logprobs: _logprobs,
  top_logprobs: _topLogprobs,
  ...chatEntries
} = chatRequestSchema.entries

/** Body of POST /completions: a prompt, chat's sampling and routing fields, and the legacy fields it can serve. */
export const completionsRequestSchema = v.looseObject({
  ...chatEntries,
  messages: chatOnly,
  tools: chatOnly,
  tool_choice: chatOnly,
  parallel_tool_calls: chatOnly,
  top_logprobs: chatOnly,
  prompt: v.union(
    [v.string(), v.pipe(v.array(v.string()), v.length(1, 'must be one prompt: the gateway serves one prompt per request'))],
    'must be a string, or a list of one string (one prompt per request; token ids are not taken)',
  ),
  suffix: v.optional(v.nullable(v.literal('', 'is not served: the gateway inserts no text between a prompt and a suffix; leave suffix out'))),
  echo: v.optional(v.nullable(v.literal(false, 'is not served: the answer never repeats the prompt; leave echo out or false'))),
  logprobs: v.optional(v.nullable(v.never('is not served on /completions: leave logprobs out or null'))),
  best_of: v.optional(v.nullable(v.literal(1, 'is not served above 1: ask for several choices with n'))),
})

/** A validated /completions request. */
export type CompletionsRequest = v.InferOutput<typeof completionsRequestSchema>

/** A whole text completion (docs/completions.md#the-answer). */
export const textCompletionSchema = v.object({
  id: v.string(),
  object: v.literal('text_completion'),
  created: int(),
  model: v.string(),
  provider: v.string(),
  system_fingerprint: v.optional(v.nullable(v.string())),
  choices: v.array(
    v.object({
      text: v.string(),
      index: int(),
      finish_reason: v.nullable(v.picklist(['stop', 'length', 'tool_calls', 'content_filter', 'error'])),
      logprobs: v.null(),
    }),
  ),
  usage: usageSchema,
})
