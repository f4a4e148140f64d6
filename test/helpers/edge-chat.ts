/**
 * The edge tests' chat request (one user message "hi", max_tokens 10, to the fake upstream's `gpt-test`), sent through
 * `call` (a Miniflare's dispatchFetch to the Worker under test), whole or streamed.
 */
export const chatThrough =
  (call: (path: string, init?: RequestInit) => Promise<Response>) =>
  (key: string, stream = false): Promise<Response> =>
    call('/api/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream }),
    })
