/**
 * Each capability's route, the provider function that serves it and what `GET /generation` shows as its `api_type`:
 * the one table that ties them together (docs/capabilities.md). A new capability is one row here; its types follow.
 */
export const CAPABILITIES = {
  chat: { path: '/chat/completions', serve: 'chat', apiType: 'completions' },
  embeddings: { path: '/embeddings', serve: 'embed', apiType: 'embeddings' },
  speech: { path: '/audio/speech', serve: 'speech', apiType: 'tts' },
  transcription: { path: '/audio/transcriptions', serve: 'transcribe', apiType: 'stt' },
  images: { path: '/images/generations', serve: 'generateImages', apiType: 'images' },
} as const satisfies Record<string, { path: `/${string}`; serve: string; apiType: string }>

/** What a request asks a model to do; each capability is one route and one provider function (docs/capabilities.md). */
export type Capability = keyof typeof CAPABILITIES

/** The API route of each capability, as models list it in `endpoints` and `supported_api_endpoints`. */
export type CapabilityPath = (typeof CAPABILITIES)[Capability]['path']

/** The provider function that serves a capability (`Provider[fn]`, its types in `ProviderCallTypes`). */
export type ProviderFunction = (typeof CAPABILITIES)[Capability]['serve']

/** What `GET /generation` shows as a request's `api_type` (OpenRouter's names). */
export type ApiType = (typeof CAPABILITIES)[Capability]['apiType']

/** Every capability, in the table's order. */
export const CAPABILITY_NAMES = Object.keys(CAPABILITIES) as Capability[]

const BY_PATH = new Map(CAPABILITY_NAMES.map((capability) => [CAPABILITIES[capability].path as string, capability]))

/** The capability a route path names (`/embeddings` → `embeddings`), or undefined for a path that is none. */
export const capabilityOfPath = (path: string): Capability | undefined => BY_PATH.get(path)
