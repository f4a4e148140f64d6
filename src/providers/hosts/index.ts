import deepseek from './deepseek'
import fireworks from './fireworks'
import { anthropicHost, geminiHost } from './first-party'
import groq from './groq'
import mistral from './mistral'
import openai from './openai'
import together from './together'
import xai from './xai'
import type { HostDefinition, HostFacts } from './define'

/**
 * The hosted OpenAI-compatible providers, written once (docs/providers.md#adding-a-host): `hostedProvider`'s slugs,
 * the CLI's `<PREFIX>_API_KEY` providers and the catalogue's host facts all come from this list.
 */
export const HOSTS = [groq, together, fireworks, mistral, deepseek, xai] as const

/** The slug of a hosted provider `hostedProvider` knows. */
export type HostSlug = (typeof HOSTS)[number]['slug']

/** OpenAI's own host (served by `openai()`, with the catalogue's OpenAI models). */
export const OPENAI_HOST = openai

/** Every provider's facts by slug: OpenAI, Anthropic, Google AI Studio and the hosts. */
export const HOST_FACTS: Record<string, HostFacts> = Object.fromEntries([openai, anthropicHost, geminiHost, ...HOSTS].map((host) => [host.slug, host]))

/** The hosted provider of a slug. */
export const hostOf = (slug: HostSlug): HostDefinition<HostSlug> => HOSTS.find((host) => host.slug === slug)!

export type { HostDefinition, HostFacts } from './define'
export { defineHost } from './define'
