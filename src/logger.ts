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
