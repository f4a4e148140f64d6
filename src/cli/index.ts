// The model-gateway command line: `serve`, `keys`, `credits`, `models`. The built `dist/cli.mjs` is what
// `bin/model-gateway.mjs` runs. Only the runner is loaded up front: a command loads the gateway when it runs.
export { main, mainCommand, runCli } from './run'
export type { CliGateway, ConfigContext, GatewayConfig, OpenOptions } from './config'
export type { DefaultProviders } from './providers'
export type { SecretSource } from './secret'
