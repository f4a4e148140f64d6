// The gateway's log lines through Nitro's consola, tagged: "WARN [model-gateway] …" (the console logger would add its
// own level to consola's).
import { consola } from 'consola'
import type { LogFields, Logger } from 'model-gateway'

const tagged = consola.withTag('model-gateway')
const line = (message: string, fields?: LogFields) => (fields ? `${message} ${JSON.stringify(fields)}` : message)

/** The gateway's logger in a Nuxt app's server: Nitro's consola, tagged `[model-gateway]`. */
export const logger: Logger = {
  debug: (message, fields) => tagged.debug(line(message, fields)),
  info: (message, fields) => tagged.info(line(message, fields)),
  warn: (message, fields) => tagged.warn(line(message, fields)),
  error: (message, fields) => tagged.error(line(message, fields)),
}
