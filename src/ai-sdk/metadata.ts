import { amountOf, type Json } from './json'

/**
 * What the provider reports under `providerMetadata.modelGateway` (docs/first-party.md#the-ai-sdk-provider): the
 * generation's id (for GET /generation) and what it cost, as the gateway's usage says it.
 */

/** The provider's metadata key. */
export const METADATA_KEY = 'modelGateway'

/** The metadata of a generation from its id, the provider that served it and its usage object (whole or last chunk). */
export function gatewayMetadata(generationId: string | undefined, provider: unknown, usage: Record<string, Json> | undefined): Record<string, Json> {
  const metadata: Record<string, Json> = {}
  if (generationId) metadata.generationId = generationId
  if (typeof provider === 'string') metadata.provider = provider
  const cost = amountOf(usage?.cost)
  if (cost !== undefined) metadata.cost = cost
  if (typeof usage?.cost_currency === 'string') metadata.costCurrency = usage.cost_currency
  const costEur = amountOf(usage?.cost_eur)
  if (costEur !== undefined) metadata.costEur = costEur
  if (typeof usage?.is_byok === 'boolean') metadata.isByok = usage.is_byok
  if (usage?.estimated === true) metadata.estimated = true
  return metadata
}
