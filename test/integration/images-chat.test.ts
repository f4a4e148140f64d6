/**
 * Images in chat answers (docs/images.md#images-in-chat), over real HTTP on 127.0.0.1 with the `openai` SDK against the
 * fake Gemini API: OpenRouter's `modalities: ["image", "text"]` becomes generateContent's `responseModalities`, the
 * images come back in the message as `images[].image_url.url` data URLs (whole and streamed), and the image output
 * tokens are billed at the model's `image_output` price, exactly; a model without that price is a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gemini, geminiModels } from '../../src/index'
import { FAKE_GEMINI_IMAGE_TOKENS, startFakeGemini, type FakeGemini } from '../fakes/gemini'
import { fakeImage } from '../fakes/openai-images'
import { openaiClient } from '../helpers/clients'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, readSse, roundUnits, units } from '../helpers/sse'

const KEY = 'AIzaSy-images-chat-key'
// The catalogue's Gemini image model at Google's published prices: $0.30 per 1M input tokens, $2.50 per 1M text output
// tokens, $30 per 1M image output tokens (1,290 tokens, $0.039, an image).
const IMAGE_MODEL = geminiModels.find((m) => m.id === 'google/gemini-2.5-flash-image')!
const FLASH = geminiModels.find((m) => m.id === 'google/gemini-2.5-flash')!
const json = { 'content-type': 'application/json' }

let google: FakeGemini
let t: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>

beforeAll(async () => {
  google = await startFakeGemini({ apiKey: KEY })
  t = await startGateway({ providers: [gemini({ apiKey: KEY, baseURL: google.url, models: [IMAGE_MODEL, FLASH] })] })
  customer = await createCustomer(t.gateway, { credits: '5' })
})
afterAll(async () => {
  await t?.close()
  await google?.close()
})

const credits = async () => units((await t.gateway.admin.getCredits(customer.user.org_id)).balance)
/** The exact cost of a usage: text tokens at $0.30 / $2.50 per 1M, image output tokens at $30 per 1M; EUR at 0.86. */
const costOf = (promptTokens: number, completionTokens: number, imageTokens: number) => {
  const usd = BigInt(promptTokens) * 300_000n + BigInt(completionTokens - imageTokens) * 2_500_000n + BigInt(imageTokens) * 30_000_000n
  return { usd: decimalText(usd), eur: decimalText(roundUnits(usd * 86n, 2)) }
}
const lastBody = () => google.requests.filter((r) => r.path.includes(':generateContent') || r.path.includes(':streamGenerateContent')).at(-1)!.body

describe('chat with modalities ["image", "text"] on a Gemini image model', () => {
  it('asks generateContent for TEXT and IMAGE, answers message.images as data URLs, and bills image tokens at image_output', async () => {
    const before = await credits()
    const client = openaiClient(t.url, customer.key)
    const prompt = 'Draw a red kite over green hills'
    const completion = await client.chat.completions.create({
      model: 'google/gemini-2.5-flash-image',
      messages: [{ role: 'user', content: prompt }],
      // OpenRouter's field; the SDK's own type lists only text and audio.
      modalities: ['image', 'text'] as unknown as ['text'],
    })
    expect(lastBody().generationConfig.responseModalities).toEqual(['IMAGE', 'TEXT'])
    const message = completion.choices[0].message as (typeof completion.choices)[0]['message'] & { images?: { type: string; image_url: { url: string } }[] }
    expect(message.content).toBe(`Hello from gemini-2.5-flash-image: ${prompt}`)
    expect(message.images).toEqual([{ type: 'image_url', image_url: { url: `data:image/png;base64,${fakeImage(prompt, 0).toString('base64')}` } }])
    const usage = completion.usage!
    expect(usage.completion_tokens_details).toMatchObject({ image_tokens: FAKE_GEMINI_IMAGE_TOKENS })
    const cost = costOf(usage.prompt_tokens, usage.completion_tokens, FAKE_GEMINI_IMAGE_TOKENS)
    expect((usage as unknown as { cost_eur: number }).cost_eur).toBe(Number(cost.eur))
    expect(decimalText(before - (await credits()))).toBe(cost.eur)
    const record = (await t.gateway.admin.usage(customer.user.org_id)).find((r) => r.id === completion.id)
    expect(record).toMatchObject({ endpoint: 'chat', cost: cost.usd, cost_eur: cost.eur, completion_tokens: usage.completion_tokens })
  })

  it('streamed: the image arrives in a delta as images[], and the stream is billed the same way', async () => {
    const before = await credits()
    const prompt = 'A blue whale, pixel art'
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({
        model: 'google/gemini-2.5-flash-image',
        messages: [{ role: 'user', content: prompt }],
        modalities: ['image', 'text'],
        stream: true,
      }),
    })
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    const images = events.flatMap((e: any) => (typeof e === 'object' ? (e.choices?.[0]?.delta?.images ?? []) : []))
    expect(images).toEqual([{ type: 'image_url', image_url: { url: `data:image/png;base64,${fakeImage(prompt, 0).toString('base64')}` } }])
    const usage = events.at(-2).usage
    const cost = costOf(usage.prompt_tokens, usage.completion_tokens, FAKE_GEMINI_IMAGE_TOKENS)
    expect(usage.cost_eur).toBe(Number(cost.eur))
    expect(decimalText(before - (await credits()))).toBe(cost.eur)
  })

  it('400 naming modalities for a model with no image_output price, nothing sent upstream', async () => {
    const sent = google.requests.length
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], modalities: ['image', 'text'] }),
    })
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.error.param).toBe('modalities')
    expect(body.error.message).toMatch(/image output/)
    expect(google.requests.length).toBe(sent)
  })

  it('without modalities, an image model is asked for text only and billed as text', async () => {
    const client = openaiClient(t.url, customer.key)
    await client.chat.completions.create({ model: 'google/gemini-2.5-flash-image', messages: [{ role: 'user', content: 'Just words' }] })
    expect(lastBody().generationConfig.responseModalities).toBeUndefined()
  })
})
