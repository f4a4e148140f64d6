import type { HostFacts, ProviderModel } from '../contracts'
import { HOST_FACTS, SHIPPED_HOSTS } from '../providers/hosts'

/** The shipped models per provider slug: each host's `models`, as its file under src/providers/hosts/ declares them. */
export const knownModels: Record<string, ProviderModel[]> = Object.fromEntries(SHIPPED_HOSTS.map((host) => [host.slug, host.models ?? []]))

/** Providers' facts and API roots by slug (OpenAI, Anthropic, Google AI Studio and the hosts of src/providers/hosts/, where they are written). */
export const knownHosts: Record<string, HostFacts> = HOST_FACTS

/** Model authors' display facts for `author_info`. */
export const knownAuthors: Record<string, { name: string; websiteUrl: string }> = {
  openai: { name: 'OpenAI', websiteUrl: 'https://openai.com' },
  'meta-llama': { name: 'Meta', websiteUrl: 'https://llama.com' },
  mistralai: { name: 'Mistral', websiteUrl: 'https://mistral.ai' },
  deepseek: { name: 'DeepSeek', websiteUrl: 'https://deepseek.com' },
  'x-ai': { name: 'xAI', websiteUrl: 'https://x.ai' },
  anthropic: { name: 'Anthropic', websiteUrl: 'https://anthropic.com' },
  google: { name: 'Google', websiteUrl: 'https://ai.google.dev' },
  demo: { name: 'model-gateway demo', websiteUrl: '' },
}
