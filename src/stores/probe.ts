import type { Kv } from './kv'

/** The storage probe of the readiness check (docs/operations.md#health-and-readiness): one read, bounded in time. */
export function createProbeStore(kv: Kv) {
  return {
    /** Reads one record (absent or not) within `timeoutMs`; resolves with the time it took, rejects when the storage fails or is slower. */
    async read(timeoutMs: number): Promise<number> {
      const started = performance.now()
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
      })
      try {
        await Promise.race([kv.get('health-probe'), late])
      } finally {
        clearTimeout(timer)
      }
      return performance.now() - started
    },
  }
}

/** The storage probe. */
export type ProbeStore = ReturnType<typeof createProbeStore>
