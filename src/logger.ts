/** Structured log fields; never put a secret here. */
export type LogFields = Record<string, unknown>

/** The logger the gateway writes to: any object with these four methods (consola, pino, console adapters…). */
export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
}

const levels = ['debug', 'info', 'warn', 'error'] as const

/** A console logger printing one line per entry at or above `level`. */
export function createConsoleLogger(level: (typeof levels)[number] = 'info'): Logger {
  const min = levels.indexOf(level)
  const write = (at: (typeof levels)[number]) => (message: string, fields?: LogFields) => {
    if (levels.indexOf(at) < min) return
    const line = `[model-gateway] ${at} ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`
    ;(at === 'error' ? console.error : at === 'warn' ? console.warn : console.log)(line)
  }
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') }
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** A pino logger, as far as the gateway uses one: level methods taking (fields, message), and pino's own marks. */
interface PinoLike {
  debug(fields: object, message: string): void
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
  error(fields: object, message: string): void
  child(bindings: object): unknown
  bindings(): object
}

const isPinoLike = (logger: unknown): logger is PinoLike =>
  !!logger && typeof (logger as PinoLike).child === 'function' && typeof (logger as PinoLike).bindings === 'function'

/**
 * The logger option as the gateway calls it (docs/operations.md#logs): a pino logger (recognised by its `child` and
 * `bindings`) gets its fields first, as pino takes them, and `{ component: 'model-gateway' }` on every line; any
 * other logger is used as it is.
 */
export function toGatewayLogger(logger: Logger | PinoLike): Logger {
  if (!isPinoLike(logger)) return logger as Logger
  const at = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: LogFields) =>
    logger[level]({ component: 'model-gateway', ...fields }, message)
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}
