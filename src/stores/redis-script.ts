import { sha1Hex } from '../crypto/hash'

/** The part of an ioredis client (or cluster) that runs Lua scripts. */
export interface ScriptClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
}

// Each script's SHA-1, computed once: the scripts are the engines' constants (a dozen), so this never grows past them.
const shas = new Map<string, string>()

/**
 * Runs one of the engines' Lua scripts by its SHA-1 (EVALSHA), so that its text is not sent and hashed on every call,
 * and sends the text (EVAL) only when that server does not know it yet (NOSCRIPT: first use, a restart, a failover, a
 * cluster node not asked before): a script that answered NOSCRIPT did not run, so running it then runs it once
 * (docs/operations.md#several-instances).
 */
export async function runScript(client: ScriptClient, script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> {
  let sha = shas.get(script)
  if (sha === undefined) shas.set(script, (sha = sha1Hex(script)))
  try {
    return await client.evalsha(sha, numKeys, ...args)
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
    return client.eval(script, numKeys, ...args)
  }
}
