/** Rough token count of text (4 characters a token), for billing an answer whose provider reported no usage (docs/money.md). */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4)
