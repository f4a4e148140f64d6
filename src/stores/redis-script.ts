import { createHash } from 'node:crypto'

/** The part of an ioredis client that runs Lua scripts. */
export interface ScriptClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
}

// The SHA1 of each script, computed once: the scripts are the stores' constants, so this map holds a handful.
const shas = new Map<string, string>()
const shaOf = (script: string): string => {
  let sha = shas.get(script)
  if (!sha) shas.set(script, (sha = createHash('sha1').update(script).digest('hex')))
  return sha
}

/**
 * Runs a Lua script by its SHA1 (EVALSHA), so that its text (kilobytes for the holds' scripts) is not sent with every
 * call; when Redis does not have it (the first call, after a restart or SCRIPT FLUSH: NOSCRIPT, nothing ran), EVAL
 * runs it and Redis keeps it for the next calls.
 */
export async function runScript(client: ScriptClient, script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> {
  try {
    return await client.evalsha(shaOf(script), numKeys, ...args)
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
    return client.eval(script, numKeys, ...args)
  }
}
