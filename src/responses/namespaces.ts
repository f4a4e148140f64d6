import type { ResponsesRequest } from '../schemas/responses'
import { type Json, objectsOf } from './json'

/**
 * Namespace tools (`{ type: "namespace", name, description, tools }`, function tools grouped under a name, as Codex
 * declares its multi-agent tools) in the chat translation (docs/responses.md#namespace-tools): each function tool of
 * a namespace is a chat function tool named `<namespace>__<name>`, and a call of that name comes back as OpenAI
 * writes it, `{ name, namespace }`.
 */
export const NAMESPACE_SEPARATOR = '__'

/** The chat function name of a tool `name` in `namespace` (the name alone outside any namespace). */
export const chatToolName = (name: string, namespace?: unknown): string =>
  typeof namespace === 'string' && namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name

/** A tool call's name and namespace as the Responses API writes them. */
export interface NamespacedName {
  name: string
  namespace?: string
}

/** The chat function names of the request's namespaced tools, each with its namespace and own name. */
export function namespacedNames(tools: ResponsesRequest['tools']): Map<string, NamespacedName> {
  const names = new Map<string, NamespacedName>()
  for (const tool of (tools ?? []) as Json[]) {
    if (tool.type !== 'namespace' || typeof tool.name !== 'string') continue
    for (const inner of objectsOf(tool.tools))
      if (typeof inner.name === 'string') names.set(chatToolName(inner.name, tool.name), { name: inner.name, namespace: tool.name })
  }
  return names
}

/** A chat tool call's function name as the Responses API's `{ name, namespace? }` (namespace only for a namespaced tool). */
export const responsesCallName = (chatName: string, names: Map<string, NamespacedName>): NamespacedName => names.get(chatName) ?? { name: chatName }
