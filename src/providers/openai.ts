import { knownHosts, knownModels } from '../catalogue/known-models'
import { openaiCompatible } from './openai-compatible'
import type { Provider, ProviderModel } from './types'

/** Options of a hosted provider preset. */
export interface HostedProviderOptions {
  /** The service's key for this provider. */
  apiKey?: string
  /** Override the API root (a proxy, a regional endpoint, a test server). */
  baseURL?: string
  /** Replace the preset's models (default: the catalogue's known models of this provider). */
  models?: ProviderModel[]
  /** Per-call timeout default for this provider is the gateway's; headers added to every call. */
  headers?: Record<string, string>
}

/** OpenAI (`https://api.openai.com/v1`), with the catalogue's OpenAI models. */
export function openai(options: HostedProviderOptions = {}): Provider {
  return hosted('openai', options, {
    description: 'OpenAI’s GPT and o-series models.',
    // OpenAI answers 400 "Unrecognized request argument" to these (include_reasoning is OpenRouter's).
    dropParameters: ['top_k', 'repetition_penalty', 'min_p', 'include_reasoning'],
    useMaxCompletionTokens: true,
    // OpenAI's chat completions answer up to 128 choices (`n`), billed in one usage report.
    maxChoices: 128,
  })
}

/** A hosted OpenAI-compatible provider the catalogue knows: `groq`, `together`, `fireworks`, `mistral`, `deepseek` or `xai`. */
export function hostedProvider(slug: 'groq' | 'together' | 'fireworks' | 'mistral' | 'deepseek' | 'xai', options: HostedProviderOptions = {}): Provider {
  return hosted(slug, options, {})
}

function hosted(slug: string, options: HostedProviderOptions, extra: Partial<Parameters<typeof openaiCompatible>[0]>): Provider {
  const host = knownHosts[slug]
  return openaiCompatible({
    slug,
    name: host.name,
    byokSupported: true,
    headquarters: host.headquarters,
    privacyPolicyUrl: host.privacyPolicyUrl,
    termsOfServiceUrl: host.termsOfServiceUrl,
    statusPageUrl: host.statusPageUrl,
    ...extra,
    baseURL: options.baseURL ?? host.baseURL,
    apiKey: options.apiKey,
    headers: options.headers,
    models: options.models ?? knownModels[slug] ?? [],
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
