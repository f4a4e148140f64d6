/** A misconfiguration the server cannot serve with; its message says what to set. */
export class ModelGatewayConfigError extends Error {
  constructor(message: string) {
    super(`[model-gateway] ${message}`)
    this.name = 'ModelGatewayConfigError'
  }
}
