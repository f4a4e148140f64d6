import { expect } from 'vitest'

/**
 * The answers of requests raced against credits for a few: every one served (200) or refused for credits (402), at
 * least one and at most `atMost` served. Reads every body (the served ones are billed once read to their end) and
 * returns how many were served.
 */
export async function servedOfRace(answers: Response[], atMost: number): Promise<number> {
  // Anything but a 200 or a 402 fails here, naming the statuses (before a body another layer may have read).
  expect(answers.filter((a) => a.status !== 200 && a.status !== 402).map((a) => a.status)).toEqual([])
  for (const [i, answer] of answers.entries()) {
    await answer.arrayBuffer().catch((error: Error) => {
      throw new Error(`answer ${i} (${answer.status} ${answer.headers.get('content-type')}) could not be read: ${error.message}`, { cause: error })
    })
  }
  const served = answers.filter((a) => a.status === 200).length
  expect(served + answers.filter((a) => a.status === 402).length).toBe(answers.length)
  expect(served).toBeGreaterThanOrEqual(1)
  expect(served).toBeLessThanOrEqual(atMost)
  return served
}
