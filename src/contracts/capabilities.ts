/** What a request asks a model to do; each capability is one route and one provider function (docs/capabilities.md). */
export type Capability = 'chat' | 'embeddings' | 'speech' | 'transcription'

/** The API route of each capability, as models list it in `endpoints` and `supported_api_endpoints`. */
export type CapabilityPath = '/chat/completions' | '/embeddings' | '/audio/speech' | '/audio/transcriptions'

/** The provider function that serves a capability. */
type ProviderFunction = 'chat' | 'embed' | 'speech' | 'transcribe'

/** Each capability's route and the provider function that serves it: the one table that ties them together. */
export const CAPABILITIES: Readonly<Record<Capability, { path: CapabilityPath; serve: ProviderFunction }>> = {
  chat: { path: '/chat/completions', serve: 'chat' },
  embeddings: { path: '/embeddings', serve: 'embed' },
  speech: { path: '/audio/speech', serve: 'speech' },
  transcription: { path: '/audio/transcriptions', serve: 'transcribe' },
}

const BY_PATH = new Map(Object.entries(CAPABILITIES).map(([capability, { path }]) => [path as string, capability as Capability]))

/** The capability a route path names (`/embeddings` → `embeddings`), or undefined for a path that is none. */
export const capabilityOfPath = (path: string): Capability | undefined => BY_PATH.get(path)
