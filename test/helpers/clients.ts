import OpenAI from 'openai'

/** The official openai client pointed at a gateway; the raw JSON bodies it receives are pushed to `rawBodies`. */
export function openaiClient(gatewayUrl: string, key: string, rawBodies: string[] = []): OpenAI {
  return new OpenAI({
    apiKey: key,
    baseURL: `${gatewayUrl}/api/v1`,
    maxRetries: 0,
    fetch: async (input, init) => {
      const res = await fetch(input, init)
      if (res.headers.get('content-type')?.startsWith('application/json')) rawBodies.push(await res.clone().text())
      return res
    },
  })
}
