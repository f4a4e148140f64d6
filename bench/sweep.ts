// How long the retention sweep (docs/retention.md#the-sweep) blocks the event loop of a gateway on its default
// in-memory storage, full: BENCH_SWEEP_REQUESTS whole chat calls through the in-process client against the fake
// upstream (test/fakes/openai.ts) fill it (50,000 by default: the default `retention.inMemoryRecords`, each call
// leaving its usage record, generation pointer and ledger entry), then `gateway.admin.sweep()` runs BENCH_SWEEP_RUNS
// times (3) while a 1 ms timer notes the longest gap between its ticks. Nothing has expired: what every sweep of a
// full gateway does every `retention.sweepIntervalSeconds`. Then a listing a request makes (the user's keys), timed
// the same way. BENCH_DIST=1: the built package.
//   npx tsx bench/sweep.ts
import { startFakeOpenAI } from '../test/fakes/openai'
import { loadGateway } from './gateway-module'

const { createGateway, openaiCompatible } = await loadGateway('sweep')
const REQUESTS = Math.max(1, Number(process.env.BENCH_SWEEP_REQUESTS) || 50_000)
const RUNS = Math.max(1, Number(process.env.BENCH_SWEEP_RUNS) || 3)

const fake = await startFakeOpenAI()
const gateway = createGateway({
  logger: false,
  secret: 'bench-secret-bench-secret-bench-secret-0123',
  retention: { sweepIntervalSeconds: 0 },
  providers: [
    openaiCompatible({
      slug: 'fake',
      name: 'Fake',
      apiKey: 'x',
      baseURL: fake.url,
      models: [{ id: 'fake/bench', upstreamId: 'bench', name: 'Fake bench', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }],
    }),
  ],
})
const user = await gateway.admin.createUser({ email: 'bench@example.com' })
await gateway.admin.addCredits(user.org_id, '1000000')
const { key } = await gateway.admin.issueKey({ userId: user.id })
const client = gateway.client({ key })

const started = Date.now()
let next = 0
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < REQUESTS) {
      if (++next % 10_000 === 0) console.log(`sweep: ${next} of ${REQUESTS} calls (${((Date.now() - started) / 1000).toFixed(0)} s)`)
      await client.chat.completions.create({ model: 'fake/bench', messages: [{ role: 'user', content: 'hello sweep' }] })
    }
  }),
)
await fake.close()

/** Runs `work` while a 1 ms timer ticks; resolves with its wall time and the longest gap between ticks (ms). */
async function blocking(work: () => Promise<unknown>): Promise<{ wallMs: number; longestGapMs: number }> {
  let last = performance.now()
  let longest = 0
  const ticker = setInterval(() => {
    const at = performance.now()
    longest = Math.max(longest, at - last)
    last = at
  }, 1)
  const start = performance.now()
  await work()
  const wallMs = performance.now() - start
  clearInterval(ticker)
  return { wallMs, longestGapMs: Math.max(longest, performance.now() - last) }
}

for (let run = 1; run <= RUNS; run++) {
  let counts: Record<string, number> = {}
  const { wallMs, longestGapMs } = await blocking(async () => {
    counts = await gateway.admin.sweep()
  })
  const removed = Object.values(counts).reduce((sum, n) => sum + n, 0)
  console.log(`sweep ${run}: ${wallMs.toFixed(0)} ms, the event loop blocked up to ${longestGapMs.toFixed(0)} ms at once; ${removed} records removed`)
}
// A listing a request makes: the user's keys (GET /api/v1/keys of a session, the dashboard), one key among all the records.
for (let run = 1; run <= RUNS; run++) {
  const { wallMs, longestGapMs } = await blocking(() => gateway.admin.listKeys(user.id))
  console.log(`listing the user's keys ${run}: ${wallMs.toFixed(1)} ms, the event loop blocked up to ${longestGapMs.toFixed(0)} ms at once`)
}
const keys = (await gateway.internals.storage.getKeys('')).length
console.log(`after ${REQUESTS} calls the storage held ${keys} keys`)
await gateway.close()
process.exit(0)
