// The benchmark's "portkey" target (BENCH_TARGETS=…,portkey): Portkey's open-source AI gateway (@portkey-ai/gateway on
// npm, installed by bench/portkey.ts outside the project's dependencies) in this process, as its own start script runs
// it (`--headless`, NODE_ENV=production), before the same fake upstream: requests name it as an OpenAI provider on a
// custom host (`x-portkey-provider`, `x-portkey-custom-host`), the way Portkey's docs point it at any OpenAI-compatible
// server. Portkey keeps no accounts, holds or exact costs: it passes the answer through (bench/README.md#portkey).
// Prints one JSON line on stdout ({ url }) once it answers; the IPC of the other hops (bench/child-stats.ts).
import { freePort } from '../test/helpers/redis-process'
import { answerStats } from './child-stats'

answerStats()

const script = process.env.BENCH_PORTKEY_SCRIPT
if (!script) {
  console.error('portkey-process: set BENCH_PORTKEY_SCRIPT to @portkey-ai/gateway/build/start-server.js')
  process.exit(2)
}

const port = await freePort()
// Portkey's start script prints a banner and a spinner on stdout: to stderr here, so that our one line is the first.
const print = process.stdout.write.bind(process.stdout)
process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => process.stderr.write(chunk, ...rest)) as typeof process.stdout.write
console.log = console.error
process.env.NODE_ENV = 'production'
process.argv.push(`--port=${port}`, '--headless')
await import(script)

const url = `http://127.0.0.1:${port}`
for (let i = 0; ; i++) {
  const answered = await fetch(`${url}/`).then(
    (res) => res.ok,
    () => false,
  )
  if (answered) break
  if (i > 100) {
    console.error('portkey-process: Portkey did not answer within 10 s')
    process.exit(1)
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
}
print(`${JSON.stringify({ url })}\n`)
