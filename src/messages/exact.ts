/*
 * The gateway's amounts are JSON numbers written exactly (docs/chat.md#usage-and-cost). Read back with JSON.parse they
 * would become binary floats (and small ones would be written with an exponent): here they are read as the marked
 * strings stringifyExact writes back as the same bare numbers.
 */

const AMOUNT_RE = /(?<!\\)"(cost|cost_eur|upstream_inference_cost|upstream_inference_prompt_cost|upstream_inference_completions_cost)":(-?\d+(?:\.\d+)?)/g

/** JSON.parse of a chat answer or chunk whose amounts stay exact when written again with stringifyExact. */
export function parseExact(text: string): Record<string, unknown> {
  return JSON.parse(text.replace(AMOUNT_RE, '"$1":"\\u0000exact:$2"')) as Record<string, unknown>
}
