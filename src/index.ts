// The package's Node entry point (`model-gateway`): everything of src/public.ts, and PostgreSQL over pg and db0.
export * from './public'
export { postgresDriver } from './stores/postgres-driver'
export type { PostgresDriverOptions } from './stores/postgres-driver'
export { postgresPool } from './stores/postgres-pool'
export type { PgPool, PostgresPoolConnector, PostgresPoolOptions } from './stores/postgres-pool'
