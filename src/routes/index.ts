import { speechRoute, transcriptionRoute } from './audio'
import { answerConsentRoute, authorizeRoute, beginAuthRoute, consentPageRoute, createCodeRoute, exchangeCodeRoute } from './auth'
import {
  byokUsageRoute,
  createCredentialRoute,
  deleteCredentialRoute,
  getCredentialRoute,
  listCredentialsRoute,
  testCredentialRoute,
  testKeyRoute,
  updateCredentialRoute,
} from './byok'
import {
  countModelsRoute,
  getModelRoute,
  listEmbeddingModelsRoute,
  listModelEndpointsRoute,
  listModelsRoute,
  listProvidersRoute,
  listUserModelsRoute,
  retrieveModelByIdRoute,
  retrieveModelRoute,
} from './catalogue'
import { chatCompletionsRoute } from './chat'
import { completionsRoute } from './completions'
import { healthRoute, readinessRoute } from './health'
import { embeddingsRoute } from './embeddings'
import { imagesRoute } from './images'
import type { RouteDefinition } from './define'
import { keyRoutes } from './keys'
import { meRoute } from './me'
import { countMessageTokensRoute, messagesRoute } from './messages'
import { responsesRoutes } from './responses'
import { activityRoute, creditsRoute, generationRoute } from './usage'
import { updateUserRoute } from './users'

/**
 * Every route of the seed, the gateway's original specification (docs/api.md#openrouter-compatibility; the full list:
 * docs/api.md#routes), in its order (plus the consent page of the browser flow).
 */
export const apiRoutes = [
  meRoute,
  authorizeRoute,
  createCodeRoute,
  exchangeCodeRoute,
  beginAuthRoute,
  consentPageRoute,
  answerConsentRoute,
  listCredentialsRoute,
  createCredentialRoute,
  testKeyRoute,
  byokUsageRoute,
  getCredentialRoute,
  updateCredentialRoute,
  deleteCredentialRoute,
  testCredentialRoute,
  speechRoute,
  transcriptionRoute,
  listModelsRoute,
  countModelsRoute,
  listUserModelsRoute,
  retrieveModelByIdRoute,
  retrieveModelRoute,
  listModelEndpointsRoute,
  getModelRoute,
  chatCompletionsRoute,
  listProvidersRoute,
  // OpenAI's and OpenRouter's embeddings (docs/embeddings.md).
  embeddingsRoute,
  listEmbeddingModelsRoute,
  // OpenAI's Images API (docs/images.md).
  imagesRoute,
  // OpenRouter's usage routes beyond the seed's (docs/api.md): GET /credits, /generation and /activity (docs/usage.md).
  creditsRoute,
  generationRoute,
  activityRoute,
  // OpenRouter's API key routes beyond the seed's (docs/api.md): GET /key and the key management routes (docs/keys.md).
  ...keyRoutes,
  // A user's limits (docs/first-party.md#budgets-for-users-and-end-users).
  updateUserRoute,
  // Anthropic's Messages API, served through chat (docs/messages.md).
  messagesRoute,
  countMessageTokensRoute,
  // OpenAI's Responses API, served through chat (docs/responses.md).
  ...responsesRoutes,
  // OpenAI's legacy text completions, served through chat (docs/completions.md).
  completionsRoute,
  // Liveness and readiness for load balancers (docs/operations.md#health-and-readiness).
  healthRoute,
  readinessRoute,
] as RouteDefinition[]
