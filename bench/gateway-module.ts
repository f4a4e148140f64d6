// The gateway's module as a bench process loads it: BENCH_DIST=1 the built package (dist/, as users run it), else
// the TypeScript sources (through tsx).
import { existsSync } from 'node:fs'

/** Whether the bench runs the built package (BENCH_DIST=1). */
export const fromDist = Boolean(process.env.BENCH_DIST)

/** Imports the gateway's entry point, from dist/ or src/; exits with a message when dist/ is asked for but missing. */
export async function loadGateway(processName: string): Promise<typeof import('../src/index')> {
  const distIndex = new URL('../dist/index.mjs', import.meta.url)
  if (fromDist && !existsSync(distIndex)) {
    console.error(`${processName}: BENCH_DIST is set but dist/ is missing: run npm run build first`)
    process.exit(2)
  }
  return (await import(fromDist ? distIndex.href : '../src/index')) as typeof import('../src/index')
}
