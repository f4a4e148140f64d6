import { expect } from 'vitest'

/**
 * The answers of requests raced against credits for a few: every one served (200) or refused for credits (402), at
 * least one and at most `atMost` served. Reads every body (the served ones are billed once read to their end) and
 * returns how many were served.
 */
export async function servedOfRace(answers: Response[], atMost: number): Promise<number> {
  for (const answer of answers) await answer.arrayBuffer()
  const served = answers.filter((a) => a.status === 200).length
  expect(served + answers.filter((a) => a.status === 402).length).toBe(answers.length)
  expect(served).toBeGreaterThanOrEqual(1)
  expect(served).toBeLessThanOrEqual(atMost)
  return served
}
