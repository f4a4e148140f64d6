/**
 * The bound on storage waits (docs/operations.md#when-the-storage-fails): the `storageTimeoutMs` option, which
 * storages it applies to, the 503 it answers, and the Redis client's errors reported through the logger, rate-limited.
 * The bound itself is tested against real servers in test/integration/storage-stall-*.test.ts.
 */
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import redisDriver from 'unstorage/drivers/redis'
import { createGateway } from '../../src/index'
import { storageBoundFor } from '../../src/stores/bounded'
import { REDIS_ERROR_REPORT_MS, reportRedisErrors } from '../../src/stores/redis-errors'
import { GatewayError } from '../../src/errors'
import { isStorageTimeout, StorageFailedError, storageBound, StorageTimeoutError } from '../../src/stores/storage-timeout'

const make = (options: Parameters<typeof createGateway>[0]) => () => createGateway({ secret: 'x'.repeat(32), logger: false, ...options })

describe('storageTimeoutMs', () => {
  it('is 5000 ms unless given, and must be a positive number of ms a timer can count', async () => {
    const gateway = make({})()
    expect(gateway.context.options.storageTimeoutMs).toBe(5000)
    await gateway.close()
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])
      expect(make({ storageTimeoutMs: bad })).toThrow(/`storageTimeoutMs` must be a positive number of milliseconds, at most 2147483647/)
    const given = make({ storageTimeoutMs: 750 })()
    expect(given.context.options.storageTimeoutMs).toBe(750)
    await given.close()
  })

  it('bounds storages on a network (Redis, a host engine, any other driver), not the memory and files of this process', () => {
    const redis = createStorage({ driver: redisDriver({ url: 'redis://127.0.0.1:1', base: 'mg', lazyConnect: true }) })
    expect(storageBoundFor(redis, 'gateway', 'auto', 1000)?.storage).toEqual({ name: 'redis', label: 'Redis' })
    const cluster = createStorage({ driver: redisDriver({ cluster: [{ host: '127.0.0.1', port: 1 }], base: '{mg}', lazyConnect: true }) })
    expect(storageBoundFor(cluster, 'gateway', 'auto', 1000)?.storage).toEqual({ name: 'redis', label: 'Redis Cluster' })
    const memory = createStorage()
    expect(storageBoundFor(memory, 'gateway', 'auto', 1000)).toBeUndefined()
    expect(storageBoundFor(createStorage({ driver: fsDriver({ base: '/tmp/mg-unused' }) }), 'gateway', 'auto', 1000)).toBeUndefined()
    const engine = { name: 'mongo-engine', atomic: () => ({}) as never, holds: () => ({}) as never }
    expect(storageBoundFor(memory, 'gateway', engine, 1000)?.storage).toEqual({ name: 'mongo-engine', label: 'mongo-engine' })
    const other = createStorage({ driver: { name: 's3', hasItem: async () => false, getItem: async () => null, getKeys: async () => [] } })
    expect(storageBoundFor(other, 'gateway', 'local', 1000)?.storage).toEqual({ name: 's3', label: 'the s3 driver' })
  })

  it('gives up waiting past the bound with a 503 naming the storage and the bound; an answer in time passes through', async () => {
    const bound = storageBound({ name: 'redis', label: 'Redis' }, 30)
    await expect(bound.wait(Promise.resolve(7))).resolves.toBe(7)
    // A storage that fails is the same 503 without the bound; its own message only as the cause (logged, never answered).
    const failed = await bound.wait(Promise.reject(new Error('ECONNREFUSED 10.0.0.5:6379'))).catch((caught: unknown) => caught)
    expect(failed).toBeInstanceOf(StorageFailedError)
    expect(isStorageTimeout(failed)).toBe(false)
    expect((failed as StorageFailedError).toJSON()).toEqual({
      error: {
        code: 503,
        type: 'no_provider_available',
        message: "The gateway's storage (Redis) failed to answer: try again shortly",
        metadata: { error_type: 'storage_unavailable', storage: 'redis' },
      },
    })
    expect(((failed as StorageFailedError).cause as Error).message).toBe('ECONNREFUSED 10.0.0.5:6379')
    // The gateway's own errors pass as they are.
    const refused = new GatewayError(402, 'Insufficient credits')
    await expect(bound.wait(Promise.reject(refused))).rejects.toBe(refused)
    const error = await bound.wait(new Promise(() => undefined)).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StorageTimeoutError)
    expect(isStorageTimeout(error)).toBe(true)
    expect((error as StorageTimeoutError).toJSON()).toEqual({
      error: {
        code: 503,
        type: 'no_provider_available',
        message: "The gateway's storage (Redis) did not answer within 30 ms: try again shortly",
        metadata: { error_type: 'storage_unavailable', storage: 'redis', timeout_ms: 30 },
      },
    })
    expect((error as StorageTimeoutError).headers).toEqual({ 'retry-after': '5' })
  })
})

describe('the Redis client errors', () => {
  // A storage whose redis driver's client is a bare emitter: what ioredis emits, without a server.
  const fakeRedis = () => {
    const client = new EventEmitter()
    const driver = {
      name: 'redis',
      options: { base: 'mg' },
      getInstance: () => client,
      hasItem: async () => false,
      getItem: async () => null,
      getKeys: async () => [],
    }
    return { client, storage: createStorage({ driver: driver as never }) }
  }

  it('are logged at once, then at most once per 10 s with how many came meanwhile', () => {
    const { client, storage } = fakeRedis()
    const lines: { message: string; fields?: Record<string, unknown> }[] = []
    const logger = { debug() {}, info() {}, warn() {}, error: (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields }) }
    let now = 1000
    const stop = reportRedisErrors(storage, 'gateway', logger, () => now)
    for (let i = 0; i < 5; i++) client.emit('error', new Error(`connect ECONNREFUSED 127.0.0.1:6379 (${i})`))
    now += REDIS_ERROR_REPORT_MS - 1
    client.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6379 (5)'))
    now += 1
    client.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6379 (6)'))
    expect(lines).toEqual([
      { message: 'the Redis connection failed; its client reconnects by itself', fields: { error: 'connect ECONNREFUSED 127.0.0.1:6379 (0)' } },
      {
        message: 'the Redis connection failed; its client reconnects by itself',
        fields: { error: 'connect ECONNREFUSED 127.0.0.1:6379 (6)', errors_since_last_report: 5 },
      },
    ])
    stop()
    expect(client.listenerCount('error')).toBe(0)
  })

  it('have one listener on a client however many gateways share it, until the last one closes', async () => {
    const { client, storage } = fakeRedis()
    const gateways = Array.from({ length: 12 }, () =>
      createGateway({ secret: 'x'.repeat(32), logger: false, storage, authCache: { ttlMs: 0 }, retention: { sweepIntervalSeconds: 0 } }),
    )
    expect(client.listenerCount('error')).toBe(1)
    // Heard: no "Unhandled error event", and EventEmitter does not throw an error nobody listens to.
    expect(() => client.emit('error', new Error('read ECONNRESET'))).not.toThrow()
    await Promise.all(gateways.slice(1).map((gateway) => gateway.close()))
    expect(client.listenerCount('error')).toBe(1)
    await gateways[0].close()
    expect(client.listenerCount('error')).toBe(0)
  })
})
