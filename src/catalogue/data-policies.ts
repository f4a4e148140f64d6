import type { Provider } from '../contracts'
import { HOST_FACTS } from '../providers/hosts'

/**
 * A provider's data policy: its own `dataPolicy`, else the default of the shipped host it is (the host file's
 * `dataPolicy`, src/providers/hosts/), when it has the same slug and that host's privacy policy URL, so that a custom
 * provider merely named `openai` is not credited with OpenAI's terms.
 */
export function dataPolicyOf(provider: Provider): Record<string, unknown> | undefined {
  if (provider.dataPolicy) return provider.dataPolicy
  const host = HOST_FACTS[provider.slug]
  return host?.dataPolicy && provider.privacyPolicyUrl === host.privacyPolicyUrl ? { ...host.dataPolicy } : undefined
}

/** What `provider.zdr` and `data_collection` read of a data policy: whether the provider may train / retain; undefined when it does not say. */
export interface DataPolicyFacts {
  training?: boolean
  retainsPrompts?: boolean
}

/** The facts of a provider's data policy, resolved once per offer when the catalogue is built (`ModelOffer.dataPolicy`). */
export function dataPolicyFacts(provider: Provider): DataPolicyFacts {
  const policy = dataPolicyOf(provider) ?? {}
  return {
    training: typeof policy.training === 'boolean' ? policy.training : undefined,
    retainsPrompts: typeof policy.retains_prompts === 'boolean' ? policy.retains_prompts : undefined,
  }
}
