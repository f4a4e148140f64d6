import type { Provider } from '../src/index'
import { defaultProviders } from '../src/cli/providers'

/** The playground's providers: the CLI's defaults (the offline demo, and those whose keys are in the environment), plus Groq for BYOK. */
export function playgroundProviders(env: NodeJS.ProcessEnv): { list: Provider[]; summary: string } {
  // Groq without a service key: listed so that customers can add their own key (BYOK) and use it.
  const { list, summary } = defaultProviders(env, { byokOnly: ['groq'] })
  return { list, summary: summary.replace('groq (customers’ own keys only)', 'groq (with your own key only: add one in the page)') }
}
