import { anthropic } from '../providers/anthropic'
import { demo } from '../providers/demo'
import { gemini } from '../providers/gemini'
import { HOSTS } from '../providers/hosts'
import { hostedProvider, openai } from '../providers/openai'
import type { Provider } from '../contracts'

/** A provider the environment can turn on: `<PREFIX>_API_KEY`, and `<PREFIX>_BASE_URL` for another address. */
interface EnvProvider {
  /** Slug of the preset (as `byokOnly` names it). */
  preset: string
  prefix: string
  create: (options: { apiKey?: string; baseURL?: string }) => Provider
}

/** Every provider the environment can configure, in the order they are listed: OpenAI, Anthropic, Gemini, then the hosts of src/providers/hosts/. */
export const ENV_PROVIDERS: EnvProvider[] = [
  { preset: 'openai', prefix: 'OPENAI', create: (options) => openai(options) },
  { preset: 'anthropic', prefix: 'ANTHROPIC', create: (options) => anthropic(options) },
  { preset: 'gemini', prefix: 'GEMINI', create: (options) => gemini(options) },
  ...HOSTS.map(
    (host): EnvProvider => ({ preset: host.slug, prefix: host.envPrefix ?? host.slug.toUpperCase(), create: (options) => hostedProvider(host.slug, options) }),
  ),
]

/** The default providers and what to say about them. */
export interface DefaultProviders {
  list: Provider[]
  /** Where each provider came from, by slug (`OPENAI_API_KEY, at https://…`), for the lines `serve` prints. */
  origins: Record<string, string>
  /** Environment settings that were seen but not used. */
  warnings: string[]
  /** One line for logs: `demo (offline, models demo/echo, …); openai at https://…; anthropic`. */
  summary: string
}

/**
 * The providers served when the config file names none (the playground's too): the offline demo provider, then each
 * one of `ENV_PROVIDERS` whose `<NAME>_API_KEY` is set (OPENAI, ANTHROPIC, GEMINI, GROQ, TOGETHER, FIREWORKS, …),
 * at `<NAME>_BASE_URL` when set. Presets named in `byokOnly` are listed even without a key, serving customers' own
 * keys only (BYOK).
 */
export function defaultProviders(env: NodeJS.ProcessEnv = process.env, options: { byokOnly?: string[] } = {}): DefaultProviders {
  const list: Provider[] = [demo({ audio: true, embeddings: true })]
  const origins: Record<string, string> = { demo: 'built in, offline' }
  const notes = ['demo (offline, models demo/echo, demo/embed, demo/speech, demo/transcribe)']
  const warnings: string[] = []
  for (const { preset, prefix, create } of ENV_PROVIDERS) {
    const apiKey = env[`${prefix}_API_KEY`] || undefined
    const baseURL = env[`${prefix}_BASE_URL`] || undefined
    if (!apiKey && !options.byokOnly?.includes(preset)) {
      if (baseURL) warnings.push(`${prefix}_BASE_URL is set without ${prefix}_API_KEY: ${preset} is not served`)
      continue
    }
    const provider = create({ apiKey, baseURL })
    list.push(provider)
    origins[provider.slug] = apiKey ? `${prefix}_API_KEY${baseURL ? `, at ${baseURL}` : ''}` : `without a key: set ${prefix}_API_KEY to serve it`
    notes.push(apiKey ? `${preset}${baseURL ? ` at ${baseURL}` : ''}` : `${preset} (customers’ own keys only)`)
  }
  return { list, origins, warnings, summary: notes.join('; ') }
}

/** One line describing a provider: slug, name, models, and where it came from. */
export function describeProvider(provider: Provider, origin?: string, slugWidth = 10): string {
  const count = provider.models.length
  const models = count === 1 ? `1 model: ${provider.models[0].id}` : `${count} models${provider.discoverModels ? ' (and those it lists)' : ''}`
  const keyNote = provider.serviceKey === false ? ', customers’ own keys only (BYOK)' : ''
  return `${provider.slug.padEnd(slugWidth)}  ${provider.name}, ${models}${keyNote}${origin ? `; ${origin}` : ''}`
}
