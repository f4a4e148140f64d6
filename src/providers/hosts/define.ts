import type { Host } from '../../contracts'
import type { OpenAICompatibleConfig } from '../openai-compatible'

/**
 * An OpenAI-compatible host, in one file: its facts, its data policy, its models, and what it needs beyond OpenAI's
 * wire format (docs/providers.md#adding-a-host).
 */
export interface HostDefinition<Slug extends string = string> extends Host {
  slug: Slug
  /** The environment's prefix: `<PREFIX>_API_KEY`, `<PREFIX>_BASE_URL` (the CLI, src/cli/providers.ts). Default the slug in capitals. */
  envPrefix?: string
  /** The host's request hook: the chat body OpenAI's format gives → the body the host takes. */
  chatBody?: OpenAICompatibleConfig['chatBody']
  /** The host's embeddings hook: OpenAI's `/embeddings` body → the body the host takes. */
  embedBody?: OpenAICompatibleConfig['embedBody']
  /** Request fields the host rejects, dropped before sending. */
  dropParameters?: string[]
  /** The most choices (`n`) one chat request may ask of it (default 1). */
  maxChoices?: number
}

/** Declares a host, keeping its slug's literal type (so that `hostedProvider`'s slug type lists it). */
export const defineHost = <Slug extends string>(host: HostDefinition<Slug>): HostDefinition<Slug> => host
