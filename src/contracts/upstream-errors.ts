/** Why an upstream call failed, in OpenRouter's words: the envelope's `metadata.error_type` (docs/errors.md#upstream-errors). */
export type UpstreamErrorKind =
  | 'rate_limit_exceeded'
  | 'provider_overloaded'
  | 'provider_unavailable'
  | 'context_length_exceeded'
  | 'authentication'
  | 'timeout'
  | 'invalid_request'
  | 'malformed_response'
  | 'content_filter'
  | 'upstream_error'

/** The provider an upstream error came from. */
export interface UpstreamSource {
  slug: string
  /** Its display name: the envelope's `metadata.provider_name`. */
  name: string
}
