import type { Driver, Storage } from 'unstorage'
import { runScript, type ScriptClient } from './redis-script'
import { UNIT } from '../billing/money'
import type { AtomicOps } from './engine-types'

/** The part of an ioredis client these operations use. */
interface RedisClient extends ScriptClient {
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>
  set(key: string, value: string, ...args: (string | number)[]): Promise<string | null>
  getdel(key: string): Promise<string | null>
  get(key: string): Promise<string | null>
}

interface RedisDriver extends Driver {
  options: { base?: string }
  getInstance: () => RedisClient
}

/** True when a mounted unstorage redis driver talks to a Redis Cluster (its `cluster` option). */
export function isRedisClusterDriver(driver: Driver): boolean {
  return isRedisDriver(driver) && Array.isArray((driver.options as { cluster?: unknown }).cluster)
}

/**
 * The hash tag of a Redis Cluster driver's base (`{mg}` in `{mg}` or `{mg}:app`), or undefined: every key of the
 * gateway's scripts must hash to one slot, and the base's tag makes them (docs/operations.md#redis-cluster).
 */
export function clusterHashTagOf(driver: Driver): string | undefined {
  const base = String((driver.options as { base?: unknown }).base ?? '')
  const open = base.indexOf('{')
  const close = open === -1 ? -1 : base.indexOf('}', open + 1)
  return close > open + 1 ? base.slice(open, close + 1) : undefined
}

/** True when a mounted unstorage driver is the redis driver with its raw client. */
export function isRedisDriver(driver: Driver): driver is RedisDriver {
  return driver?.name === 'redis' && typeof (driver as Partial<RedisDriver>).getInstance === 'function'
}

// A decimal counter is a hash of whole units `u` and a fraction `f` in [0, 10^12): both stay exact
// (HINCRBY is 64-bit integer arithmetic; the values Lua sees stay below 2^53, so its doubles are exact).
const addUnitsTo = (key: string) => `
local f = redis.call('HINCRBY', ${key}, 'f', ARGV[2])
local carry = 0
if f >= ${UNIT} then carry = 1 elseif f < 0 then carry = -1 end
if carry ~= 0 then f = redis.call('HINCRBY', ${key}, 'f', -carry * ${UNIT}) end
redis.call('HINCRBY', ${key}, 'u', ARGV[1])
local u = redis.call('HINCRBY', ${key}, 'u', carry)
`
const ADD_UNITS = `${addUnitsTo('KEYS[1]')}
return {u, f}
`

// Several decimal counters in one script (one command, one execution): KEYS[i] takes ARGV[2i-1] whole units and
// ARGV[2i] of fraction, with the same carry as ADD_UNITS.
const ADD_UNITS_MANY = `
for i = 1, #KEYS do
  local f = redis.call('HINCRBY', KEYS[i], 'f', ARGV[2 * i])
  local carry = 0
  if f >= ${UNIT} then carry = 1 elseif f < 0 then carry = -1 end
  if carry ~= 0 then redis.call('HINCRBY', KEYS[i], 'f', -carry * ${UNIT}) end
  redis.call('HINCRBY', KEYS[i], 'u', tonumber(ARGV[2 * i - 1]) + carry)
end
return 0
`

/**
 * A windowed counter (docs/keys.md) is a decimal counter with the start of its window in field `p`: one that counted
 * an earlier window starts again from 0. In Lua, before adding to KEYS[i] for the window starting at `start` and
 * keeping it `ttl` ms more; shared by the atomic operations and the holds' settle script.
 */
export const restartWindowLua = (key: string, start: string, ttl: string) => `
do
  local p = redis.call('HGET', ${key}, 'p')
  if (not p) or tonumber(p) < tonumber(${start}) then
    redis.call('DEL', ${key})
    redis.call('HSET', ${key}, 'p', ${start})
  end
  if tonumber(${ttl}) > 0 and redis.call('PTTL', ${key}) < tonumber(${ttl}) then redis.call('PEXPIRE', ${key}, ${ttl}) end
end
`
const ADD_WINDOW_UNITS = `${restartWindowLua('KEYS[1]', 'ARGV[3]', 'ARGV[4]')}
${addUnitsTo('KEYS[1]')}
return {u, f}
`

// Compare-and-set of a raw value: ARGV[1] '1' expects the key absent, else its value to be ARGV[2]; then ARGV[3]
// '1' deletes it, else it is set to ARGV[4] (keeping any expiry). 1 when written, 0 when the value had changed.
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[4], 'KEEPTTL') end
return 1
`

// The claim (KEYS[1], set only if absent) and the charge (ADD_UNITS on KEYS[2]) in one script: both or neither.
// The two keys are not in one hash slot, so this one does not run on Redis Cluster.
const CLAIM_AND_ADD_UNITS = `
if not redis.call('SET', KEYS[1], ARGV[3], 'NX') then return 0 end
${addUnitsTo('KEYS[2]')}
return 1
`

// A read-modify-write retries while other writers win the compare-and-set; past this many rounds it gives up.
const MAX_UPDATE_ROUNDS = 1000

/** Splits ledger units into the whole units and the fraction in [0, 10^12) that the decimal counters' scripts take. */
export function splitUnits(delta: bigint): [string, string] {
  let whole = delta / UNIT
  let fraction = delta % UNIT
  if (fraction < 0n) {
    fraction += UNIT
    whole -= 1n
  }
  return [whole.toString(), fraction.toString()]
}

const INCREMENT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 and redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n
`

/** Atomic operations on Redis through the unstorage redis driver's own ioredis client: exact across instances. */
export function createRedisAtomic(storage: Storage, driver: RedisDriver): AtomicOps {
  const driverBase = (driver.options.base ?? '').replace(/:$/, '')
  // The raw client does not prefix keys: map a storage key to the key the driver itself would use.
  const redisKey = (key: string) => {
    const { base } = storage.getMount(key)
    const relative = key.slice(base.length)
    return driverBase ? `${driverBase}:${relative}` : relative
  }
  const client = () => driver.getInstance()
  return {
    kind: 'redis',
    async addUnits(key, delta, window) {
      const [u, f] = (
        window
          ? await runScript(client(), ADD_WINDOW_UNITS, 1, redisKey(key), ...splitUnits(delta), window.start, Math.max(1, Math.ceil(window.ttlMs)))
          : await runScript(client(), ADD_UNITS, 1, redisKey(key), ...splitUnits(delta))
      ) as [number, number]
      return BigInt(u) * UNIT + BigInt(f)
    },
    // One script for all of them: atomic as a transaction, in one command instead of MULTI, an EVAL each and EXEC.
    async addUnitsMany(changes) {
      if (!changes.length) return
      await runScript(
        client(),
        ADD_UNITS_MANY,
        changes.length,
        ...changes.map((change) => redisKey(change.key)),
        ...changes.flatMap((change) => splitUnits(change.delta)),
      )
    },
    async getUnits(key, windowStart) {
      const [u, f, p] = await client().hmget(redisKey(key), 'u', 'f', 'p')
      if (windowStart !== undefined && (p === null || Number(p) < windowStart)) return 0n
      return BigInt(u ?? '0') * UNIT + BigInt(f ?? '0')
    },
    async increment(key, by = 1, ttlSeconds = 0) {
      return Number(await runScript(client(), INCREMENT, 1, redisKey(key), by, Math.round(ttlSeconds * 1000)))
    },
    async setIfAbsent(key, value) {
      return (await client().set(redisKey(key), JSON.stringify(value), 'NX')) === 'OK'
    },
    async take<T>(key: string) {
      const raw = await client().getdel(redisKey(key))
      return raw === null ? null : (JSON.parse(raw) as T)
    },
    async read<T>(key: string) {
      const raw = await client().get(redisKey(key))
      return raw === null ? null : (JSON.parse(raw) as T)
    },
    // Optimistic: read, compute, compare-and-set in a script; WATCH/MULTI would need a connection of its own, and
    // the driver's client is shared by every concurrent request.
    async update<T>(key: string, fn: (current: T | null) => T | null | undefined) {
      const target = redisKey(key)
      for (let round = 0; round < MAX_UPDATE_ROUNDS; round++) {
        const raw = await client().get(target)
        const current = raw === null ? null : (JSON.parse(raw) as T)
        const next = fn(current)
        if (next === undefined || (next === null && raw === null)) return current
        const written = await runScript(
          client(),
          COMPARE_AND_SET,
          1,
          target,
          raw === null ? '1' : '0',
          raw ?? '',
          next === null ? '1' : '0',
          next === null ? '' : JSON.stringify(next),
        )
        if (Number(written) === 1) return next
        if (round >= 8) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(round, 50)))
      }
      throw new Error(`model-gateway: gave up updating ${key} after ${MAX_UPDATE_ROUNDS} conflicting writes`)
    },
    async claimAndAddUnits(claimKey, claim, counterKey, delta) {
      const claimed = await runScript(client(), CLAIM_AND_ADD_UNITS, 2, redisKey(claimKey), redisKey(counterKey), ...splitUnits(delta), JSON.stringify(claim))
      return Number(claimed) === 1
    },
  }
}
