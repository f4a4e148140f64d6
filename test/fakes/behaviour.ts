import type { FakeOpenAI } from './openai'

/** Error answers by behaviour name: status, OpenAI's error body, headers. */
export type ErrorTable = Record<string, [number, any, Record<string, string>?]>

/**
 * The behaviour a request of the fake OpenAI picks (see test/fakes/openai.ts): the next scripted one for its model,
 * else its key's, else its prompt's, else its model's mode, else the model name itself.
 */
export function behaviourOf(fake: FakeOpenAI, named: string, bearer: string, prompt: string): string {
  const byPrompt = Object.entries(fake.promptModes).find(([text]) => prompt.includes(text))?.[1]
  return fake.script[named]?.shift() ?? fake.keyModes[bearer] ?? byPrompt ?? fake.modes[named] ?? named
}

/**
 * Answers the error a behaviour names (`fail-429`, …), its Retry-After as `fake.retryAfter` says (429 and 503 only);
 * false when the behaviour is not an error.
 */
export function answeredError(
  fake: FakeOpenAI,
  errors: ErrorTable,
  behaviour: string,
  json: (status: number, value: unknown, headers?: Record<string, string>) => void,
): boolean {
  if (!errors[behaviour]) return false
  const [status, error, headers = {}] = errors[behaviour]
  const { 'retry-after': _default, ...rest } = headers
  const retryAfter = fake.retryAfter === undefined ? _default : fake.retryAfter
  json(status, error, retryAfter != null && (status === 429 || status === 503) ? { ...rest, 'retry-after': retryAfter } : rest)
  return true
}
