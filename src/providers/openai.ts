import { hostOf, OPENAI_HOST, type HostDefinition, type HostSlug } from './hosts'
import { openaiCompatible, type OpenAICompatibleConfig } from './openai-compatible'
import type { Provider, ProviderModel } from '../contracts'

/** Options of a hosted provider preset. */
export interface HostedProviderOptions {
  /** The service's key for this provider. */
  apiKey?: string
  /** Override the API root (a proxy, a regional endpoint, a test server). */
  baseURL?: string
  /** Replace the preset's models (default: the models its host file declares). */
  models?: ProviderModel[]
  /** Per-call timeout default for this provider is the gateway's; headers added to every call. */
  headers?: Record<string, string>
  /** Send calls through this transport instead of node:http (tests). */
  transport?: OpenAICompatibleConfig['transport']
}

/** OpenAI (`https://api.openai.com/v1`), with the catalogue's OpenAI models; `/responses` requests go to its own Responses API. */
export function openai(options: HostedProviderOptions = {}): Provider {
  return hosted(OPENAI_HOST, options, { useMaxCompletionTokens: true, responsesApi: true })
}

/**
 * A hosted OpenAI-compatible provider: one the package ships (src/providers/hosts/: `groq`, `together`, `fireworks`,
 * `mistral`, `deepseek` or `xai`), or a host definition of your own (`defineHost({ … })`, docs/providers.md#adding-a-host),
 * whose data policy the provider then carries as its `dataPolicy`.
 */
export function hostedProvider(host: HostSlug | HostDefinition, options: HostedProviderOptions = {}): Provider {
  if (typeof host === 'string') return hosted(hostOf(host), options, {})
  return hosted(host, options, host.dataPolicy ? { dataPolicy: { ...host.dataPolicy } } : {})
}

// A shipped host's data policy is credited by the catalogue, by slug and privacy policy URL (src/catalogue/data-policies.ts).
function hosted(host: HostDefinition, options: HostedProviderOptions, extra: Partial<OpenAICompatibleConfig>): Provider {
  const { baseURL, envPrefix: _env, dataPolicy: _policy, models, ...declared } = host
  return openaiCompatible({
    byokSupported: true,
    ...declared,
    ...extra,
    baseURL: options.baseURL ?? baseURL,
    apiKey: options.apiKey,
    headers: options.headers,
    models: options.models ?? models ?? [],
    transport: options.transport,
  })
}

/** A local OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp): models discovered from its `GET /models`, free. */
export function localProvider(options: { slug?: string; name?: string; baseURL: string; apiKey?: string; models?: ProviderModel[] }): Provider {
  return openaiCompatible({
    slug: options.slug ?? 'local',
    name: options.name ?? 'Local',
    description: 'A self-hosted OpenAI-compatible server.',
    baseURL: options.baseURL,
    apiKey: options.apiKey,
    models: options.models ?? [],
    discover: true,
    byokSupported: false,
    region: 'local',
  })
}
