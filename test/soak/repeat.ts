// npm run soak:repeat: the soak (test/soak/soak.ts) SOAK_RUNS times in a row (default 20), each in a process of its
// own, on every storage of SOAK_STORAGES (postgres, redis), each run SOAK_SECONDS long (default 30 here). It stops at
// the first run that does not reconcile, prints that run's whole output and exits 1: a money check that fails once in
// several runs is a defect to find, never one to retry until green (docs/operations.md#the-soak-test).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const RUNS = Number(process.env.SOAK_RUNS || 20)
const SECONDS = process.env.SOAK_SECONDS || '30'

/** One soak run in its own process: its exit code and everything it printed. */
function run(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'soak.ts')], {
      env: { ...process.env, SOAK_SECONDS: SECONDS },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.on('exit', (code) => resolve({ code, output }))
  })
}

const started = Date.now()
for (let i = 1; i <= RUNS; i++) {
  const { code, output } = await run()
  // Each storage's summary line ("postgres: … reconciled" and the like), to show progress without the whole output.
  const summary = output
    .split('\n')
    .filter((line) => /^(postgres|redis)\b|usage records|MISMATCH|skipped/.test(line))
    .map((line) => `  ${line}`)
    .join('\n')
  const minutes = ((Date.now() - started) / 60_000).toFixed(1)
  if (code !== 0) {
    console.log(`run ${i}/${RUNS}: FAILED (exit ${code}) after ${minutes} min\n${output}`)
    process.exit(1)
  }
  console.log(`run ${i}/${RUNS}: reconciled (${minutes} min)\n${summary}`)
}
console.log(`${RUNS} runs in a row, every org reconciled on every storage`)
