import type { ModelOffer } from '../catalogue/catalogue'
import type { Provider, ProviderModel } from '../providers/types'

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

/** The capabilities a model serves: those its `endpoints` name (default: chat only). */
export function capabilitiesOf(model: Pick<ProviderModel, 'endpoints'>): Capability[] {
  if (!model.endpoints) return ['chat']
  return model.endpoints.flatMap((path) => {
    const capability = capabilityOfPath(path)
    return capability ? [capability] : []
  })
}

/** The routes a model serves (`endpoints`, default `/chat/completions`). */
export const pathsOf = (model: Pick<ProviderModel, 'endpoints'>): string[] => model.endpoints ?? [CAPABILITIES.chat.path]

/** True when the provider implements the function that serves the capability. */
export const providerServes = (provider: Provider, capability: Capability): boolean => typeof provider[CAPABILITIES[capability].serve] === 'function'

/** True when one provider's offer serves the capability: its model lists it and the provider implements it. */
export const offerServes = (offer: Pick<ModelOffer, 'model' | 'provider'>, capability: Capability): boolean =>
  capabilitiesOf(offer.model).includes(capability) && providerServes(offer.provider, capability)
