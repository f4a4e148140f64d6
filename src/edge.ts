import { fetchTransport, setDefaultTransport } from './providers/transport'

// The runtime-neutral entry point, `model-gateway/edge` (docs/edge.md#the-edge-entry): what src/index.ts exports
// but PostgreSQL over pg (TCP), plus the Durable Object engine; no module it imports imports `node:`.
export * from './public'
export { durableObjectEngine, durableObjectStorage, type DurableObjectNamespaceLike, type DurableObjectOptions } from './stores/durable-object-engine'
export { migrateToPerOrg, type PerOrgMigration, type PerOrgMigrationOptions } from './stores/durable-object-migrate'
export { ModelGatewayObject, type DurableObjectStateLike } from './stores/durable-object-server'
export type { DurableObjectStorageLike } from './stores/durable-object-state'

// Providers call their upstreams through fetch here, never node:http (which workerd only emulates).
setDefaultTransport(fetchTransport)
