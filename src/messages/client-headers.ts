/** The client's Anthropic headers a native Messages request takes along (docs/native.md#messages). */
export function anthropicHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of ['anthropic-version', 'anthropic-beta']) {
    const value = headers.get(name)
    if (value) out[name] = value
  }
  return out
}
