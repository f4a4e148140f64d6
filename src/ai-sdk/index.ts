/**
 * `model-gateway/ai-sdk`: the gateway as a Vercel AI SDK provider over its in-process client
 * (docs/first-party.md#the-ai-sdk-provider). It imports nothing at run time: `ai` and `@ai-sdk/provider` are
 * optional peer dependencies whose types it names.
 */
export { createGatewayProvider, gatewayProvider, type GatewayProviderSettings, type GatewayProviderV2, type GatewayProviderV3 } from './provider'
export type { InProcessCallOptions, OpenAIShapedClient } from './client'
export { GatewayCallError, GatewayNoSuchModelError } from './errors'
