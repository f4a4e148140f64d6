const PREFIX = 'gw1.'

/**
 * A reasoning item's `encrypted_content`: the provider's signed thinking blocks (chat's `reasoning_details`,
 * docs/reasoning.md) as `gw1.` and base64url JSON, so that the next turn can send them back (docs/responses.md#reasoning).
 */
export const encryptedContentOf = (details: unknown[]): string | undefined =>
  details.length ? PREFIX + Buffer.from(JSON.stringify(details)).toString('base64url') : undefined

/** The reasoning_details an `encrypted_content` of ours holds; none for anything else (OpenAI's own, say). */
export function reasoningDetailsOf(encrypted: string | null | undefined): Record<string, unknown>[] {
  if (!encrypted?.startsWith(PREFIX)) return []
  try {
    const details = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8'))
    return Array.isArray(details) ? details.filter((d) => d && typeof d === 'object') : []
  } catch {
    return []
  }
}
