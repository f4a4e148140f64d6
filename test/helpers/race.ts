import { expect } from 'vitest'

/** A raced request's answer, read to its end when it arrived. */
export interface RacedAnswer {
  status: number
  contentType: string | null
  body: string
}

/**
 * Sends `count` requests at once (`send(i)`) and reads each answer to its end as soon as it arrives, in the same task,
 * never after the others: Miniflare's dispatchFetch answers `new Response(inner.body, inner)` and drops undici's
 * `inner`, whose garbage collection cancels the stream both share (undici's FinalizationRegistry), so a body left
 * unread across a collection fails to read with "Body is unusable: Body has already been read". A body that cannot be
 * read fails naming its request.
 */
export function race(count: number, send: (i: number) => Promise<Response>): Promise<RacedAnswer[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const answer = await send(i)
      const contentType = answer.headers.get('content-type')
      const body = await answer.text().catch((error: Error) => {
        throw new Error(`answer ${i} (${answer.status} ${contentType}) could not be read: ${error.message}`, { cause: error })
      })
      return { status: answer.status, contentType, body }
    }),
  )
}

/**
 * The answers of requests raced against credits for a few (`race`): every one served (200: a chat completion, or a
 * stream ending in `[DONE]`) or refused for credits (402, the error envelope), at least one and at most `atMost`
 * served. Returns how many were served.
 */
export function servedOfRace(answers: RacedAnswer[], atMost: number): number {
  // Anything but a 200 or a 402 fails here, naming the statuses and what they said.
  expect(answers.filter((a) => a.status !== 200 && a.status !== 402).map((a) => `${a.status} ${a.body.slice(0, 200)}`)).toEqual([])
  const served = answers.filter((a) => a.status === 200)
  for (const answer of served) {
    if (answer.contentType?.startsWith('text/event-stream')) expect(answer.body.trimEnd().endsWith('data: [DONE]'), answer.body).toBe(true)
    else expect(JSON.parse(answer.body).choices[0].message.content).toBe('Hello from gpt-test: hi')
  }
  for (const refused of answers.filter((a) => a.status === 402)) expect(JSON.parse(refused.body).error.code).toBe(402)
  expect(served.length).toBeGreaterThanOrEqual(1)
  expect(served.length).toBeLessThanOrEqual(atMost)
  return served.length
}
