import type { Driver, Storage } from 'unstorage'
import { UNIT } from '../billing/money'
import type { AtomicOps } from './atomic'

/** The part of an ioredis client these operations use. */
interface RedisClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>
  set(key: string, value: string, ...args: (string | number)[]): Promise<string | null>
  getdel(key: string): Promise<string | null>
}

interface RedisDriver extends Driver {
  options: { base?: string }
  getInstance: () => RedisClient
}

/** True when a mounted unstorage driver is the redis driver with its raw client. */
export function isRedisDriver(driver: Driver): driver is RedisDriver {
  return driver?.name === 'redis' && typeof (driver as Partial<RedisDriver>).getInstance === 'function'
}

// A decimal counter is a hash of whole units `u` and a fraction `f` in [0, 10^12): both stay exact
// (HINCRBY is 64-bit integer arithmetic; the values Lua sees stay below 2^53, so its doubles are exact).
const ADD_UNITS = `
local f = redis.call('HINCRBY', KEYS[1], 'f', ARGV[2])
local carry = 0
if f >= ${UNIT} then carry = 1 elseif f < 0 then carry = -1 end
if carry ~= 0 then f = redis.call('HINCRBY', KEYS[1], 'f', -carry * ${UNIT}) end
redis.call('HINCRBY', KEYS[1], 'u', ARGV[1])
local u = redis.call('HINCRBY', KEYS[1], 'u', carry)
return {u, f}
`

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
    async addUnits(key, delta) {
      let whole = delta / UNIT
      let fraction = delta % UNIT
      if (fraction < 0n) {
        fraction += UNIT
        whole -= 1n
      }
      const [u, f] = (await client().eval(ADD_UNITS, 1, redisKey(key), whole.toString(), fraction.toString())) as [number, number]
      return BigInt(u) * UNIT + BigInt(f)
    },
    async getUnits(key) {
      const [u, f] = await client().hmget(redisKey(key), 'u', 'f')
      return BigInt(u ?? '0') * UNIT + BigInt(f ?? '0')
    },
    async increment(key, by = 1, ttlSeconds = 0) {
      return Number(await client().eval(INCREMENT, 1, redisKey(key), by, Math.round(ttlSeconds * 1000)))
    },
    async setIfAbsent(key, value) {
      return (await client().set(redisKey(key), JSON.stringify(value), 'NX')) === 'OK'
    },
    async take<T>(key: string) {
      const raw = await client().getdel(redisKey(key))
      return raw === null ? null : (JSON.parse(raw) as T)
    },
  }
}
