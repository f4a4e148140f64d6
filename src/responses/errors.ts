import type { GatewayError } from '../errors'

// OpenAI's error `type` for each status the gateway answers (docs/responses.md#errors).
const TYPES: Record<number, string> = {
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  408: 'timeout_error',
  429: 'rate_limit_error',
}

/**
 * An error in OpenAI's shape, `{ error: { message, type, param, code } }`: `code` is the gateway's slug
 * (docs/errors.md#statuses), and the gateway's `metadata` is kept (docs/responses.md#errors).
 */
export function openaiErrorBody(error: GatewayError): unknown {
  const type = TYPES[error.status] ?? (error.status >= 500 ? 'server_error' : 'invalid_request_error')
  return {
    error: {
      message: error.message,
      type,
      param: error.param ?? null,
      code: error.type,
      ...(error.metadata ? { metadata: error.metadata } : {}),
    },
  }
}
