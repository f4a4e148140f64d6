/**
 * The vector the fake upstreams answer for a text: deterministic (the same text and length give the same vector,
 * different texts different ones), unit length, rounded to 6 decimals as a float32 would print. Tests compare
 * the gateway's answers with it.
 */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  let seed = 2166136261
  for (let i = 0; i < text.length; i++) seed = Math.imul(seed ^ text.charCodeAt(i), 16777619) >>> 0
  const raw: number[] = []
  for (let i = 0; i < dimensions; i++) {
    seed = Math.imul(seed ^ (seed >>> 15), 2246822507) >>> 0
    seed = Math.imul(seed ^ (seed >>> 13), 3266489909) >>> 0
    raw.push((seed / 0xffffffff) * 2 - 1)
  }
  const norm = Math.sqrt(raw.reduce((sum, x) => sum + x * x, 0)) || 1
  return raw.map((x) => Math.round((x / norm) * 1e6) / 1e6)
}

/** The text a token-array input stands for in the fakes (its tokens joined by spaces), so that it gets a vector too. */
export const tokensText = (tokens: number[]) => tokens.join(' ')
