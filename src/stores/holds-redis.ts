import type { Driver, Storage } from 'unstorage'
import { UNIT } from '../billing/money'
import { splitUnits as split } from './atomic-redis'
import type { Budget, HoldOps } from './holds'

type RedisDriver = Driver & { options: { base?: string }; getInstance: () => RedisClient }

/** The part of an ioredis client holds use. */
interface RedisClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  hgetall(key: string): Promise<Record<string, string>>
}

// Amounts cross into Lua as a whole part and a fraction in [0, 10^12), as the decimal counters keep them (u, f), so
// every number Lua sees stays below 2^53 and its doubles stay exact. A hold is the hash field `id` = "whole:fraction:expires".
const LUA_HELPERS = `
local UNIT = ${UNIT}
local function counter(key)
  local v = redis.call('HMGET', key, 'u', 'f')
  return tonumber(v[1] or '0'), tonumber(v[2] or '0')
end
local function normalise(w, f)
  local carry = math.floor(f / UNIT)
  return w + carry, f - carry * UNIT
end
`

// KEYS: per budget i, used, holds, limit (the holds key again when the limit is fixed). ARGV: id, whole, fraction,
// expires, now, n, then per budget the fixed limit's whole and fraction, or '-' and '-' for a counter.
const PLACE = `${LUA_HELPERS}
local id, hw, hf, expires, now, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
for i = 1, n do
  local used, holds, limit = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local lw, lf
  if ARGV[5 + 2 * i] == '-' then lw, lf = counter(limit) else lw, lf = tonumber(ARGV[5 + 2 * i]), tonumber(ARGV[6 + 2 * i]) end
  local uw, uf = counter(used)
  local aw, af = lw - uw, lf - uf
  local all = redis.call('HGETALL', holds)
  for j = 1, #all, 2 do
    local w, f, e = string.match(all[j + 1], '^(-?%d+):(%d+):(%d+)$')
    if tonumber(e) <= now then redis.call('HDEL', holds, all[j]) else aw, af = aw - tonumber(w), af - tonumber(f) end
  end
  aw, af = normalise(aw, af)
  if aw < hw or (aw == hw and af < hf) then return {i, aw, af} end
end
for i = 1, n do
  local holds = KEYS[3 * i - 1]
  redis.call('HSET', holds, id, ARGV[2] .. ':' .. ARGV[3] .. ':' .. ARGV[4])
  if redis.call('PTTL', holds) < expires - now then redis.call('PEXPIRE', holds, expires - now) end
end
return {0}
`

// KEYS: per budget i, used and holds. ARGV: id, n, then per budget the charge's whole and fraction.
const SETTLE = `${LUA_HELPERS}
local id, n = ARGV[1], tonumber(ARGV[2])
for i = 1, n do
  local used, holds = KEYS[2 * i - 1], KEYS[2 * i]
  redis.call('HDEL', holds, id)
  local cw, cf = ARGV[1 + 2 * i], ARGV[2 + 2 * i]
  if cw ~= '0' or cf ~= '0' then
    local f = redis.call('HINCRBY', used, 'f', cf)
    local carry = 0
    if f >= UNIT then carry = 1 elseif f < 0 then carry = -1 end
    if carry ~= 0 then redis.call('HINCRBY', used, 'f', -carry * UNIT) end
    redis.call('HINCRBY', used, 'u', tonumber(cw) + carry)
  end
end
return 0
`


/** Holds on Redis through the unstorage redis driver's own client: one script places, one settles; exact across instances. */
export function createRedisHolds(storage: Storage, driver: RedisDriver): HoldOps {
  const driverBase = (driver.options.base ?? '').replace(/:$/, '')
  const redisKey = (key: string) => {
    const relative = key.slice(storage.getMount(key).base.length)
    return driverBase ? `${driverBase}:${relative}` : relative
  }
  const client = () => driver.getInstance()
  return {
    kind: 'redis',
    async place({ id, units, expiresAt, now, budgets }) {
      const keys = budgets.flatMap((b) => [redisKey(b.usedKey), redisKey(b.holdsKey), redisKey('key' in b.limit ? b.limit.key : b.holdsKey)])
      const limits = budgets.flatMap((b) => ('units' in b.limit ? split(b.limit.units) : ['-', '-']))
      const [whole, fraction] = split(units)
      const result = (await client().eval(PLACE, keys.length, ...keys, id, whole, fraction, Math.ceil(expiresAt), Math.floor(now), budgets.length, ...limits)) as number[]
      if (result[0] === 0) return { ok: true }
      return { ok: false, index: result[0] - 1, available: BigInt(result[1]) * UNIT + BigInt(result[2]) }
    },
    async settle({ id, budgets, charges }) {
      const keys = budgets.flatMap((b) => [redisKey(b.usedKey), redisKey(b.holdsKey)])
      await client().eval(SETTLE, keys.length, ...keys, id, budgets.length, ...charges.flatMap(split))
    },
    async held(budget, now) {
      let units = 0n
      for (const value of Object.values(await client().hgetall(redisKey(budget.holdsKey))) as string[]) {
        const [whole, fraction, expires] = value.split(':')
        if (Number(expires) > now) units += BigInt(whole) * UNIT + BigInt(fraction)
      }
      return units
    },
  }
}
