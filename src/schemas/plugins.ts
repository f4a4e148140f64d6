// OpenRouter's `plugins` request field (docs/limits.md#openrouters-fields-the-gateway-consumes): which plugins the
// gateway runs, and what it answers for one it does not.

/** Plugins the gateway runs. None yet: an enabled plugin is refused with 400 (src/schemas/chat.ts) rather than silently not run. */
export const GATEWAY_PLUGINS: readonly string[] = []

/** The message of a `plugins` entry the gateway does not run (`{ id, enabled: false }` asks for nothing: accepted). */
export const pluginNotRun = (id: string): string =>
  `the ${JSON.stringify(id)} plugin is not run by this gateway (it runs ${GATEWAY_PLUGINS.length ? GATEWAY_PLUGINS.join(', ') : 'none'}); leave it out or set enabled: false`
