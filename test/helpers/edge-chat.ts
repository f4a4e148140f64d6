/**
 * The edge tests' chat request (one user message "hi", max_tokens 10, to the fake upstream's `gpt-test`), sent through
 * `call` (a Miniflare's dispatchFetch to the Worker under test), whole or streamed. The answer's body is read at once:
 * Miniflare's dispatchFetch answers a Response of its own over the body of undici's, and once undici's is garbage
 * collected its FinalizationRegistry cancels the body still unread (then "Body is unusable: Body has already been
 * read"), which a race holding dozens of answers before reading them met now and then.
 */
export const chatThrough =
  (call: (path: string, init?: RequestInit) => Promise<Response>) =>
  async (key: string, stream = false): Promise<Response> => {
    const res = await call('/api/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream }),
    })
    return new Response(await res.arrayBuffer(), { status: res.status, statusText: res.statusText, headers: res.headers })
  }
