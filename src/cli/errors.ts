import { isGatewayError } from '../errors'

/** An error the CLI reports as one line and an exit code (1: it failed; 2: it was called wrongly). */
export class CliError extends Error {
  readonly exitCode: number
  constructor(message: string, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }

  override get name(): string {
    return 'CliError'
  }
}

/** A usage mistake (unknown option, missing argument): exit code 2. */
export const usageError = (message: string): CliError => new CliError(message, 2)

// eslint-disable-next-line no-control-regex
const ANSI = /\u001B\[[0-9;]*m/g

/** The one line the CLI prints for an error: its message (a GatewayError's is already written for people), never a stack. */
export function errorLine(error: unknown): string {
  const message = isGatewayError(error) || error instanceof Error ? error.message : String(error)
  const line = message
    .replace(ANSI, '')
    .replace(/^model-gateway:\s*/, '')
    .split('\n')
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ')
  return line || (error instanceof Error ? error.name : 'unknown error')
}
