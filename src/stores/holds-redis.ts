import type { Driver, Storage } from 'unstorage'
import { runScript, type ScriptClient } from './redis-script'
import { UNIT } from '../billing/money'
import { restartWindowLua, splitUnits as split } from './atomic-redis'
import type { HoldOps } from './engine-types'

type RedisDriver = Driver & { options: { base?: string }; getInstance: () => RedisClient }

/** The part of an ioredis client holds use. */
interface RedisClient extends ScriptClient {
  hgetall(key: string): Promise<Record<string, string>>
}

// Amounts cross into Lua as a whole part and a fraction in [0, 10^12), as the decimal counters keep them (u, f), so
// every number Lua sees stays below 2^53 and its doubles stay exact. A hold is the hash field `id` = "whole:fraction:expires".
const LUA_HELPERS = `
local UNIT = ${UNIT}
-- A decimal counter; with a window start, a windowed one (docs/keys.md): 0 when it counted an earlier window.
local function counter(key, window)
  local v = redis.call('HMGET', key, 'u', 'f', 'p')
  if window ~= nil and ((not v[3]) or tonumber(v[3]) < window) then return 0, 0 end
  return tonumber(v[1] or '0'), tonumber(v[2] or '0')
end
local function normalise(w, f)
  local carry = math.floor(f / UNIT)
  return w + carry, f - carry * UNIT
end
local function add(key, w, f)
  if w == '0' and f == '0' then return end
  local nf = redis.call('HINCRBY', key, 'f', f)
  local carry = 0
  if nf >= UNIT then carry = 1 elseif nf < 0 then carry = -1 end
  if carry ~= 0 then redis.call('HINCRBY', key, 'f', -carry * UNIT) end
  redis.call('HINCRBY', key, 'u', tonumber(w) + carry)
end
`

// KEYS: per budget i, used, holds, limit (the holds key again when the limit is fixed), then the counters it also
// counts. ARGV: id, expires, now, n, then per budget six values: the fixed limit's whole and fraction ('-' and '-' for
// a counter), its window start ('-' when it does not reset), how many counters it also counts, and the hold's whole
// and fraction on it.
const PLACE = `${LUA_HELPERS}
local id, expires, now, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
-- Placed already (a resent command whose reply was lost): placed, nothing changed.
if redis.call('HEXISTS', KEYS[2], id) == 1 then return {0} end
local k, a = 1, 5
local placed = {}
for i = 1, n do
  local used, holds, limit = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local window = nil
  if ARGV[a + 2] ~= '-' then window = tonumber(ARGV[a + 2]) end
  local also, hw, hf = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  local lw, lf
  if ARGV[a] == '-' then lw, lf = counter(limit, nil) else lw, lf = tonumber(ARGV[a]), tonumber(ARGV[a + 1]) end
  local uw, uf = counter(used, window)
  local aw, af = lw - uw, lf - uf
  for j = 1, also do
    local xw, xf = counter(KEYS[k + 2 + j], window)
    aw, af = aw - xw, af - xf
  end
  local all = redis.call('HGETALL', holds)
  for j = 1, #all, 2 do
    local w, f, e = string.match(all[j + 1], '^(-?%d+):(%d+):(%d+)$')
    if tonumber(e) <= now then redis.call('HDEL', holds, all[j]) else aw, af = aw - tonumber(w), af - tonumber(f) end
  end
  aw, af = normalise(aw, af)
  if aw < hw or (aw == hw and af < hf) then return {i, aw, af} end
  placed[i] = {holds, ARGV[a + 4] .. ':' .. ARGV[a + 5] .. ':' .. ARGV[2]}
  k, a = k + 3 + also, a + 6
end
for i = 1, n do
  local holds = placed[i][1]
  redis.call('HSET', holds, id, placed[i][2])
  if redis.call('PTTL', holds) < expires - now then redis.call('PEXPIRE', holds, expires - now) end
end
return {0}
`

// KEYS: per budget i, used and holds; then each counter charged; then the records written; then the once key (when
// given). ARGV: id, n, per budget the charge's whole and fraction, then m, and per counter its charge's whole and
// fraction, its window start ('-' when not windowed) and how long to keep it (ms); then each record's JSON, in the
// keys' order (the unstorage driver's format); then '1' when the last key is the once key, else '0'.
const SETTLE = `${LUA_HELPERS}
local id, n = ARGV[1], tonumber(ARGV[2])
local once = ARGV[#ARGV] == '1'
-- Run already (a resent command whose reply was lost, a retried settlement): its once record exists.
if once and redis.call('EXISTS', KEYS[#KEYS]) == 1 then return 1 end
for i = 1, n do
  local used, holds = KEYS[2 * i - 1], KEYS[2 * i]
  redis.call('HDEL', holds, id)
  add(used, ARGV[1 + 2 * i], ARGV[2 + 2 * i])
end
local m = tonumber(ARGV[3 + 2 * n])
for c = 1, m do
  local key, a = KEYS[2 * n + c], 4 + 2 * n + 4 * (c - 1)
  if ARGV[a + 2] ~= '-' then
    ${restartWindowLua('key', 'ARGV[a + 2]', 'ARGV[a + 3]')}
  end
  add(key, ARGV[a], ARGV[a + 1])
end
local r = #KEYS - 2 * n - m
if once then r = r - 1 end
for i = 1, r do redis.call('SET', KEYS[2 * n + m + i], ARGV[#ARGV - 1 - r + i]) end
return 0
`

// KEYS: the holds key of each budget. ARGV: id, new expiry, now. A hold still live gets the new expiry (its amount kept).
const RENEW = `
local id, expires, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local renewed = 0
for i = 1, #KEYS do
  local v = redis.call('HGET', KEYS[i], id)
  if v then
    local w, f, e = string.match(v, '^(-?%d+):(%d+):(%d+)$')
    if tonumber(e) > now then
      redis.call('HSET', KEYS[i], id, w .. ':' .. f .. ':' .. ARGV[2])
      if redis.call('PTTL', KEYS[i]) < expires - now then redis.call('PEXPIRE', KEYS[i], expires - now) end
      renewed = renewed + 1
    end
  end
end
return renewed
`

/** The hold scripts' text: the storage-fault tests find their commands on the wire by it (its SHA-1 under EVALSHA). */
export const HOLD_SCRIPTS = { place: PLACE, settle: SETTLE, renew: RENEW } as const

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
      const keys = budgets.flatMap((b) => [
        redisKey(b.usedKey),
        redisKey(b.holdsKey),
        redisKey('key' in b.limit ? b.limit.key : b.holdsKey),
        ...(b.alsoUsed ?? []).map(redisKey),
      ])
      const perBudget = budgets.flatMap((b) => [
        ...('units' in b.limit ? split(b.limit.units) : ['-', '-']),
        b.usedWindow === undefined ? '-' : String(b.usedWindow),
        String(b.alsoUsed?.length ?? 0),
        ...split(b.units ?? units),
      ])
      const result = (await runScript(
        client(),
        PLACE,
        keys.length,
        ...keys,
        id,
        Math.ceil(expiresAt),
        Math.floor(now),
        budgets.length,
        ...perBudget,
      )) as number[]
      if (result[0] === 0) return { ok: true }
      return { ok: false, index: result[0] - 1, available: BigInt(result[1]) * UNIT + BigInt(result[2]) }
    },
    async settle({ id, budgets, charges, counters = [], records = [], once }) {
      const charged = counters.filter((c) => c.units !== 0n)
      const keys = [...budgets.flatMap((b) => [redisKey(b.usedKey), redisKey(b.holdsKey)]), ...charged.map((c) => redisKey(c.key))]
      for (const record of records) keys.push(redisKey(record.key))
      if (once) keys.push(redisKey(once))
      const perCounter = charged.flatMap((c) => [
        ...split(c.units),
        c.window ? String(c.window.start) : '-',
        c.window ? String(Math.max(1, Math.ceil(c.window.ttlMs))) : '0',
      ])
      const written = records.map((record) => JSON.stringify(record.value))
      await runScript(
        client(),
        SETTLE,
        keys.length,
        ...keys,
        id,
        budgets.length,
        ...charges.flatMap(split),
        charged.length,
        ...perCounter,
        ...written,
        once ? '1' : '0',
      )
    },
    async renew({ id, budgets, expiresAt, now }) {
      const keys = budgets.map((b) => redisKey(b.holdsKey))
      return Number(await runScript(client(), RENEW, keys.length, ...keys, id, Math.ceil(expiresAt), Math.floor(now)))
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
