import type { Host } from '../../contracts'
import { anthropicHost } from './anthropic'
import deepseek from './deepseek'
import type { HostDefinition } from './define'
import fireworks from './fireworks'
import { geminiHost } from './gemini'
import groq from './groq'
import mistral from './mistral'
import openai from './openai'
import together from './together'
import xai from './xai'

/**
 * The hosted OpenAI-compatible providers, written once (docs/providers.md#adding-a-host): `hostedProvider`'s slugs,
 * the CLI's `<PREFIX>_API_KEY` providers and the catalogue's host facts, data policies and models all come from this list.
 */
export const HOSTS = [groq, together, fireworks, mistral, deepseek, xai] as const

/** The slug of a hosted provider `hostedProvider` knows. */
export type HostSlug = (typeof HOSTS)[number]['slug']

/** OpenAI's own host (served by `openai()`, with its models). */
export const OPENAI_HOST = openai

/** Every shipped host: OpenAI, Anthropic, Google AI Studio and the hosted ones; the catalogue reads their facts, policies and models. */
export const SHIPPED_HOSTS: readonly Host[] = [openai, anthropicHost, geminiHost, ...HOSTS]

/** Every shipped host by slug. */
export const HOST_FACTS: Record<string, Host> = Object.fromEntries(SHIPPED_HOSTS.map((host) => [host.slug, host]))

/** The hosted provider of a slug. */
export const hostOf = (slug: HostSlug): HostDefinition<HostSlug> => HOSTS.find((host) => host.slug === slug)!

export type { HostDefinition } from './define'
export { defineHost } from './define'
