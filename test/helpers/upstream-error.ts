import { isUpstreamError, type UpstreamError } from '../../src/providers/upstream-error'

/** The error as an UpstreamError, to read what routing reads of it; fails the test when it is not one. */
export function asUpstream(error: unknown): UpstreamError {
  if (!isUpstreamError(error)) throw new Error(`expected an UpstreamError, got ${String(error)}`)
  return error
}
