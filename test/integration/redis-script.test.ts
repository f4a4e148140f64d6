/**
 * The Redis engines run their Lua scripts by SHA-1 (docs/operations.md#several-instances): EVALSHA on every call, the
 * script's text (EVAL) only when the server answers NOSCRIPT (first use, after SCRIPT FLUSH as after a restart or a
 * failover), and a script that answered NOSCRIPT did not run, so each call runs it exactly once. Against real Redis.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScript, type ScriptClient } from '../../src/stores/redis-script'

const url = process.env.REDIS_URL

describe.skipIf(!url)('Lua scripts by SHA-1 (REDIS_URL)', () => {
  let redis: Redis
  const key = `mg-test-script-${process.pid}-${Date.now()}`
  // A script of this test alone (its key in the text), so that no other test's run has loaded it.
  const script = `-- ${key}\nreturn redis.call('INCR', KEYS[1])`
  const calls = { eval: 0, evalsha: 0 }
  let client: ScriptClient

  beforeAll(() => {
    redis = new Redis(url!)
    client = {
      eval: (...args) => {
        calls.eval++
        return redis.eval(...args)
      },
      evalsha: (...args) => {
        calls.evalsha++
        return redis.evalsha(...args)
      },
    }
  })
  afterAll(async () => {
    await redis.del(key)
    await redis.quit()
  })

  it('sends the text once, runs each call once, and sends it again after the server forgot it', async () => {
    expect(await runScript(client, script, 1, key)).toBe(1)
    expect(calls).toEqual({ eval: 1, evalsha: 1 }) // NOSCRIPT, then the text
    expect(await runScript(client, script, 1, key)).toBe(2)
    expect(await runScript(client, script, 1, key)).toBe(3)
    expect(calls).toEqual({ eval: 1, evalsha: 3 })

    // As after a restart or a failover: the server knows no script; the next call loads it and runs it once.
    await redis.script('FLUSH')
    expect(await runScript(client, script, 1, key)).toBe(4)
    expect(calls).toEqual({ eval: 2, evalsha: 4 })
    expect(Number(await redis.get(key))).toBe(4)
  })

  it('passes a script’s own error on without running it again', async () => {
    const failing = `-- ${key} failing\nredis.call('INCR', KEYS[1])\nreturn redis.error_reply('refused by the script')`
    await expect(runScript(client, failing, 1, key)).rejects.toThrow('refused by the script')
    await expect(runScript(client, failing, 1, key)).rejects.toThrow('refused by the script')
    // Each call ran the script once (its INCR before the error stays): the error is not NOSCRIPT, so no second run.
    expect(Number(await redis.get(key))).toBe(6)
  })
})
