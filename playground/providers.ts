import { anthropic, demo, gemini, hostedProvider, openai, type Provider } from '../src/index'

/** The playground's providers: the offline demo always, and real ones whose keys are in the environment. */
export function playgroundProviders(env: NodeJS.ProcessEnv): { list: Provider[]; summary: string } {
  const list: Provider[] = [demo()]
  const notes = ['demo (offline, model demo/echo)']
  if (env.OPENAI_API_KEY) {
    list.push(openai({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined }))
    notes.push(`openai${env.OPENAI_BASE_URL ? ` at ${env.OPENAI_BASE_URL}` : ''}`)
  }
  if (env.ANTHROPIC_API_KEY) {
    list.push(anthropic({ apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL || undefined }))
    notes.push('anthropic')
  }
  if (env.GEMINI_API_KEY) {
    list.push(gemini({ apiKey: env.GEMINI_API_KEY, baseURL: env.GEMINI_BASE_URL || undefined }))
    notes.push('gemini')
  }
  // Groq without a service key: listed so that customers can add their own key (BYOK) and use it.
  list.push(hostedProvider('groq', { apiKey: env.GROQ_API_KEY || undefined }))
  notes.push(env.GROQ_API_KEY ? 'groq' : 'groq (with your own key only: add one in the page)')
  return { list, summary: notes.join('; ') }
}
