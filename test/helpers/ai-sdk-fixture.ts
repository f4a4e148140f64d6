import { expect } from 'vitest'
import { createGatewayProvider } from '../../src/ai-sdk'
import type { ProviderModel } from '../../src/contracts'
import { anthropic } from '../../src/providers/anthropic'
import { gemini } from '../../src/providers/gemini'
import { geminiModels } from '../../src/providers/models/gemini-models'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { openai as openaiPreset } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic'
import { type FakeGemini, startFakeGemini } from '../fakes/gemini'
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai'
import type { GatewayClient } from '../../src/index'
import { createCustomer, startGateway, type TestGateway } from './server'
import { decimalText, units } from './sse'

/**
 * What the tests of the AI SDK provider (test/integration/ai-sdk-provider*.test.ts) run on: a gateway with the fake
 * OpenAI upstream (chat models `fake/gpt-test`, `fake/slow`, `fake/fail-500`, `fake/fail-midstream` at PRICING, and the `openai()` preset's
 * embedding models), the fake Anthropic API (Claude Sonnet 5.5, which thinks) and the fake Gemini API (Gemini's
 * models, whose thought signatures a tool call must carry back), customers with a provider each.
 */

export const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
/** openai/text-embedding-3-small's price per input token (the catalogue's). */
export const EMBED_PRICE = '0.00000002'
const ANTHROPIC_KEY = 'sk-ant-api03-aisdk-0123456789'
const GEMINI_KEY = 'AIzaSy-aisdk-provider-key'
export const SONNET = anthropicModels.find((m) => m.id === 'anthropic/claude-sonnet-5.5')!

/** The sum of decimal amounts, exactly. */
export const sum = (amounts: string[]) => decimalText(amounts.reduce((total, amount) => total + units(amount), 0n))
/** The fakes' token counts (test/fakes/openai.ts, test/fakes/anthropic.ts, test/fakes/openai-embeddings.ts). */
export const fakePromptTokens = (upstreamBody: any) => Math.ceil(JSON.stringify(upstreamBody.messages).length / 4)
export const anthropicPromptTokens = (body: any) => Math.ceil(JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages }).length / 4)
export const embedTokens = (texts: string[]) => texts.reduce((n, text) => n + Math.max(1, Math.ceil(text.length / 4)), 0)
export const words = (text: string) => text.split(/\s+/).filter(Boolean).length
/** The weather tool's JSON schema. */
export const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } as const

export interface AiSdkFixture {
  upstream: FakeOpenAI
  claude: FakeAnthropic
  google: FakeGemini
  t: TestGateway
  /** A new customer (its own org with `credits` EUR, none when null), its client, the provider (`specificationVersion`) over it. */
  customer(
    credits?: string | null,
    specificationVersion?: 'v2' | 'v3',
  ): Promise<
    Awaited<ReturnType<typeof createCustomer>> & {
      client: GatewayClient
      gateway: any
      spent(): Promise<string>
      generation(id: string): Promise<any>
    }
  >
  chatsSince(from: number): FakeOpenAI['requests']
  messagesSince(from: number): FakeAnthropic['requests']
  close(): Promise<void>
}

/** Starts the fakes and the gateway. */
export async function startAiSdkFixture(): Promise<AiSdkFixture> {
  const upstream = await startFakeOpenAI({ apiKey: 'sk-upstream', slowMs: 150 })
  const claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY })
  const google = await startFakeGemini({ apiKey: GEMINI_KEY })
  const models: ProviderModel[] = ['gpt-test', 'slow', 'fail-500', 'fail-midstream'].map((name) => ({
    id: `fake/${name}`,
    upstreamId: name,
    pricing: PRICING,
    supportedParameters: ['max_tokens', 'temperature', 'top_p', 'seed', 'stop', 'tools', 'tool_choice', 'response_format', 'structured_outputs'],
  }))
  const t = await startGateway({
    exchangeRates: { EUR: '1', USD: '0.86' },
    providers: [
      openaiCompatible({ slug: 'fake', name: 'Fake', baseURL: upstream.url, apiKey: 'sk-upstream', models }),
      openaiPreset({ apiKey: 'sk-upstream', baseURL: upstream.url }),
      anthropic({ apiKey: ANTHROPIC_KEY, baseURL: claude.url, models: [SONNET] }),
      gemini({ apiKey: GEMINI_KEY, baseURL: google.url, models: geminiModels }),
    ],
  })
  return {
    upstream,
    claude,
    google,
    t,
    async customer(credits = '5', specificationVersion = 'v3') {
      const c = await createCustomer(t.gateway, { credits: credits ?? undefined })
      // The in-process client of the customer's key (docs/first-party.md#the-in-process-client): no HTTP.
      const client = t.gateway.client({ key: c.key })
      const gateway = specificationVersion === 'v2' ? createGatewayProvider({ client, specificationVersion }) : createGatewayProvider({ client })
      const spent = async () => (await t.gateway.admin.getCredits(c.user.org_id)).total_usage
      // The generation as GET /generation answers it (its record is written as the answer ends: polled).
      const generation = async (id: string) => {
        let data: any
        await expect
          .poll(async () => {
            const res = await t.request(`/api/v1/generation?id=${id}`, { headers: c.auth })
            data = res.ok ? ((await res.json()) as any).data : undefined
            return data?.status
          })
          .toBeDefined()
        return data
      }
      return { ...c, client, gateway, spent, generation }
    },
    chatsSince: (from) => upstream.requests.slice(from).filter((r) => r.path === '/v1/chat/completions'),
    messagesSince: (from) => claude.requests.slice(from).filter((r) => r.path === '/v1/messages'),
    async close() {
      await t.close()
      await upstream.close()
      await claude.close()
      await google.close()
    },
  }
}
