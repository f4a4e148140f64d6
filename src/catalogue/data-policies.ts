import type { Provider } from '../contracts'
import { knownHosts } from './known-models'

/**
 * What a provider does with prompts and completions: `Provider.dataPolicy`, shown as `data_policy` by `/providers`
 * and read by `provider.zdr` and `provider.data_collection` (docs/routing.md "Provider preferences").
 */
export interface DataPolicy {
  /** It may train or improve its models on prompts and completions. */
  training: boolean
  /** It may keep prompts or completions after answering (abuse monitoring, logs); `false` is zero data retention. */
  retains_prompts: boolean
  /** How long at most, in days, when it keeps them and says for how long. */
  retention_days?: number
  /** The page that says so, and the day (`YYYY-MM-DD`) it was read there. */
  source: string
  checked: string
  note?: string
}

/**
 * The default data policy of each provider preset, as its own terms state it for API use with a service key and no
 * special agreement. A host with another agreement (zero data retention, a billed Gemini project, …) sets
 * `dataPolicy` on the provider, which replaces this. Together, Mistral and xAI are not listed: their API terms were
 * not checked, and a provider without a policy is treated as one that may train and retain (as OpenRouter does).
 */
export const knownDataPolicies: Record<string, DataPolicy> = {
  openai: {
    training: false,
    retains_prompts: true,
    retention_days: 30,
    source: 'https://platform.openai.com/docs/guides/your-data',
    checked: '2026-11-26',
    note: "API data is not used for training unless the organisation opts in; abuse monitoring logs are kept up to 30 days. Zero data retention needs OpenAI's approval.",
  },
  anthropic: {
    training: false,
    retains_prompts: true,
    retention_days: 30,
    source: 'https://privacy.anthropic.com/en/articles/7996866-how-long-do-you-store-personal-data',
    checked: '2026-11-26',
    note: 'API inputs and outputs are deleted within 30 days and not used for training, unless agreed otherwise (zero data retention agreement); flagged content may be kept longer.',
  },
  'google-ai-studio': {
    training: true,
    retains_prompts: true,
    retention_days: 55,
    source: 'https://ai.google.dev/gemini-api/terms',
    checked: '2026-11-26',
    note: "Unpaid Services (free quota, no Cloud Billing) are used to improve Google's products and may be read by reviewers; a project with Cloud Billing is a Paid Service whose prompts are not used for training. Prompts and outputs are kept 55 days for abuse monitoring (https://ai.google.dev/gemini-api/docs/usage-policies).",
  },
  groq: {
    training: false,
    retains_prompts: true,
    retention_days: 30,
    source: 'https://console.groq.com/docs/your-data',
    checked: '2026-11-26',
    note: "Inference requests are not retained by default, but may be logged up to 30 days to troubleshoot or investigate abuse unless zero data retention is enabled in the account's Data Controls.",
  },
  fireworks: {
    training: false,
    retains_prompts: false,
    source: 'https://docs.fireworks.ai/guides/security_compliance/data_handling',
    checked: '2026-11-26',
    note: "Zero data retention by default for open models; Fireworks' own proprietary models may log prompts, and the Responses API stores conversations 30 days unless store=false.",
  },
  deepseek: {
    training: true,
    retains_prompts: true,
    source: 'https://cdn.deepseek.com/policies/en-US/deepseek-privacy-policy.html',
    checked: '2026-11-26',
    note: 'The privacy policy lists training and improving its models among the uses of inputs, and the open platform terms do not exclude API use; no retention period is given.',
  },
}

/**
 * A provider's data policy: its own `dataPolicy`, else the default of the preset it is (same slug and the preset's
 * privacy policy URL, so that a custom provider merely named `openai` is not credited with OpenAI's terms).
 */
export function dataPolicyOf(provider: Provider): Record<string, unknown> | undefined {
  if (provider.dataPolicy) return provider.dataPolicy
  const known = knownDataPolicies[provider.slug]
  const host = knownHosts[provider.slug]
  return known && host && provider.privacyPolicyUrl === host.privacyPolicyUrl ? { ...known } : undefined
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
