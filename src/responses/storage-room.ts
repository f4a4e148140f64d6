import type { GatewayContext } from '../context'
import { GatewayError } from '../errors'
import type { HeldRoom } from '../stores/responses'

/**
 * The 400 of a request whose conversation would take its org's stored responses past their cap
 * (docs/responses.md#stored-responses): what they hold, the cap, and the three ways out.
 */
export function storedBytesCapReached(used: number, cap: number, bytes: number): GatewayError {
  return new GatewayError(
    400,
    `store: this organization's stored responses hold ${used} bytes, and storing this conversation (${bytes} bytes) would take them past their cap of ${cap} bytes: send the request with store: false, delete stored responses (DELETE /responses/{id}), or ask the gateway's operator to raise retention.responsesBytesPerOrg`,
    { param: 'store', metadata: { stored_bytes: used, request_bytes: bytes, max_stored_bytes: cap } },
  )
}

/**
 * Holds room for a conversation of `bytes` under the org's cap of stored-response bytes before any provider is
 * called; throws the 400 of storedBytesCapReached when it does not fit.
 */
export async function holdStorageRoom(ctx: GatewayContext, org: string, bytes: number): Promise<HeldRoom> {
  const asked = await ctx.responses.hold(org, bytes)
  if ('refused' in asked) throw storedBytesCapReached(asked.refused.used, ctx.responses.maxBytesPerOrg, bytes)
  return asked.held
}
