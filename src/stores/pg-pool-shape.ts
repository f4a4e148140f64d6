// pg's Pool as the gateway sees it, apart from postgres-pool.ts (which loads pg), so that modules that only tell a
// pool apart do not bring pg into an edge bundle (docs/edge.md#what-the-edge-entry-leaves-out).

/** A query's result as pg answers it. */
export interface PgResult {
  rows: Record<string, unknown>[]
  [field: string]: unknown
}

/** The part of pg's Pool the connector and the gateway use. */
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<PgResult>
  connect(): Promise<PgPoolClient>
  on(event: 'error', listener: (error: Error) => void): unknown
  end(): Promise<void>
  /** Connections open (pg's Pool counts them; the gateway tells a pool from a single client by it). */
  readonly totalCount: number
}

/** A connection borrowed from the pool: `release(true)` closes it instead of giving it back. */
export interface PgPoolClient {
  query(text: string, values?: unknown[]): Promise<PgResult>
  on(event: 'error', listener: (error: Error) => void): unknown
  removeListener(event: 'error', listener: (error: Error) => void): unknown
  release(destroy?: boolean | Error): void
}

/** True when a db0 connector's instance is a pool (pg's Pool, or one like it), not one connection for life. */
export function isPgPool(instance: unknown): instance is PgPool {
  const pool = instance as Partial<PgPool> | undefined
  return typeof pool?.totalCount === 'number' && typeof pool.connect === 'function' && typeof pool.query === 'function'
}
