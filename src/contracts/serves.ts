import { CAPABILITIES, capabilityOfPath, type Capability } from './capabilities'
import type { ProviderModel } from './model'
import type { Provider } from './provider'

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
export const offerServes = (offer: { model: Pick<ProviderModel, 'endpoints'>; provider: Provider }, capability: Capability): boolean =>
  capabilitiesOf(offer.model).includes(capability) && providerServes(offer.provider, capability)
