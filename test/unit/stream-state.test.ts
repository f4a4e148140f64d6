import { describe, expect, it } from 'vitest'
import { createStreamMachine, type StreamEvent, type StreamOutcome, type StreamPhase } from '../../src/pipeline/stream-state'

// The settled stream's machine on its own (src/pipeline/stream-state.ts): for each way a stream ends, the events that
// lead there (what the stream's body sends it), the phases they pass, and the one settlement, whatever else asks for
// one afterwards. test/unit/stream-endings.test.ts drives the real stream through the same endings.

type Served = { provider: string }
const served: Served = { provider: 'up' }
const charged = (status: 'success' | 'error' | 'cancelled'): StreamOutcome<Served> => ({ kind: 'charged', served, status })
const released: StreamOutcome<Served> = { kind: 'released' }

/** A step of an ending: an event (and the phase it leads to), or a settlement asked for. */
type Step = { event: StreamEvent; to: StreamPhase } | { settle: StreamOutcome<Served> }

/** A machine whose settlement records its calls; `failing`: the charge rejects (the storage did not take it). */
function machine(failing = false) {
  const calls: StreamOutcome<Served>[] = []
  const m = createStreamMachine<Served>({
    charge: async (s, status) => {
      calls.push({ kind: 'charged', served: s, status })
      if (failing) throw new Error('the storage did not take the charge')
      return { completion_tokens: 7 }
    },
    release: async () => {
      calls.push({ kind: 'released' })
    },
  })
  let untracked = 0
  m.onSettled(() => untracked++)
  return { m, calls, untracked: () => untracked }
}

const endings: { name: string; steps: Step[]; settled: StreamOutcome<Served>; failing?: boolean }[] = [
  {
    name: 'done: billed as served',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'opened', to: 'flowing' },
      { event: 'done', to: 'ending' },
      { settle: charged('success') },
      { event: 'closed', to: 'closed' },
    ],
    settled: charged('success'),
  },
  {
    name: 'speech: opened before its response, done, the client leaving while it is billed',
    steps: [{ event: 'opened', to: 'flowing' }, { event: 'done', to: 'ending' }, { settle: charged('success') }, { event: 'left', to: 'closed' }],
    settled: charged('success'),
  },
  {
    name: 'speech: cut by the shutdown, a failure of its provider then changing nothing',
    steps: [
      { event: 'opened', to: 'flowing' },
      { event: 'shutdown', to: 'cut' },
      { event: 'broke', to: 'cut' },
      { settle: charged('cancelled') },
      { event: 'closed', to: 'closed' },
    ],
    settled: charged('cancelled'),
  },
  {
    name: 'no provider opened it before the response (an HTTP error): released',
    steps: [{ event: 'failed', to: 'closed' }, { settle: released }],
    settled: released,
  },
  {
    name: 'client abort while waiting, the provider never opens: released',
    steps: [{ event: 'responded', to: 'waiting' }, { event: 'left', to: 'closed' }, { settle: released }],
    settled: released,
  },
  {
    name: 'client abort while waiting, the provider opens late: billed cancelled',
    steps: [{ event: 'responded', to: 'waiting' }, { event: 'left', to: 'closed' }, { event: 'opened', to: 'closed' }, { settle: charged('cancelled') }],
    settled: charged('cancelled'),
  },
  {
    name: 'client abort after content: billed cancelled',
    steps: [{ event: 'responded', to: 'waiting' }, { event: 'opened', to: 'flowing' }, { event: 'left', to: 'closed' }, { settle: charged('cancelled') }],
    settled: charged('cancelled'),
  },
  {
    name: 'client abort after content of a reasoning model: read on, then billed cancelled',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'opened', to: 'flowing' },
      { event: 'readOn', to: 'draining' },
      { event: 'left', to: 'draining' },
      { event: 'drained', to: 'closed' },
      { settle: charged('cancelled') },
    ],
    settled: charged('cancelled'),
  },
  {
    name: 'upstream error before opening, after the response (keep-alives): released',
    steps: [{ event: 'responded', to: 'waiting' }, { event: 'failed', to: 'ending' }, { settle: released }, { event: 'closed', to: 'closed' }],
    settled: released,
  },
  {
    name: 'upstream error after content: billed error',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'opened', to: 'flowing' },
      { event: 'broke', to: 'ending' },
      { settle: charged('error') },
      { event: 'closed', to: 'closed' },
    ],
    settled: charged('error'),
  },
  {
    name: 'deadline while waiting (the opening fails with 408), the client leaving as it ends: released',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'failed', to: 'ending' },
      { settle: released },
      { event: 'left', to: 'closed' },
      { event: 'closed', to: 'closed' },
    ],
    settled: released,
  },
  {
    name: 'close() while waiting: released',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'shutdown', to: 'cut' },
      { settle: released },
      { event: 'broke', to: 'cut' },
      { event: 'closed', to: 'closed' },
    ],
    settled: released,
  },
  {
    name: 'close() while flowing: billed cancelled, a client leaving meanwhile changes nothing',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'opened', to: 'flowing' },
      { event: 'shutdown', to: 'cut' },
      { settle: charged('cancelled') },
      { event: 'left', to: 'closed' },
      { settle: charged('cancelled') },
    ],
    settled: charged('cancelled'),
  },
  {
    name: 'close() while reading on after the client left: the read-on stops, billed cancelled',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'opened', to: 'flowing' },
      { event: 'readOn', to: 'draining' },
      { event: 'shutdown', to: 'draining' },
      { event: 'drained', to: 'closed' },
      { settle: charged('cancelled') },
    ],
    settled: charged('cancelled'),
  },
  {
    name: 'exception in the billing at the end: told as a failure, still the one settlement',
    failing: true,
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'opened', to: 'flowing' },
      { event: 'done', to: 'ending' },
      { settle: charged('success') },
      { event: 'broke', to: 'ending' },
      { settle: charged('error') },
      { event: 'closed', to: 'closed' },
    ],
    settled: charged('success'),
  },
  {
    name: 'exception thrown by a dialect mid-stream: billed error; the client leaving during the billing changes nothing',
    steps: [
      { event: 'responded', to: 'waiting' },
      { event: 'opened', to: 'flowing' },
      { event: 'broke', to: 'ending' },
      { settle: charged('error') },
      { event: 'left', to: 'closed' },
      { settle: charged('cancelled') },
      { event: 'closed', to: 'closed' },
    ],
    settled: charged('error'),
  },
]

describe('the settled stream’s machine', () => {
  for (const ending of endings) {
    it(`${ending.name}: one settlement, then settled`, async () => {
      const { m, calls, untracked } = machine(ending.failing)
      expect(m.phase).toBe('opening')
      const settlements: Promise<unknown>[] = []
      for (const step of ending.steps) {
        if ('settle' in step) settlements.push(m.settle(step.settle).catch((error: Error) => error.message))
        else {
          m.on(step.event)
          expect([step.event, m.phase]).toEqual([step.event, step.to])
        }
      }
      const results = await Promise.all(settlements)
      // Every later settle() answers the first one's result.
      expect(new Set(results).size).toBe(1)
      expect(results[0]).toEqual(
        ending.failing ? 'the storage did not take the charge' : ending.settled.kind === 'charged' ? { completion_tokens: 7 } : undefined,
      )
      expect(calls).toEqual([ending.settled])
      expect(m.outcome).toEqual(ending.settled)
      expect(m.phase).toBe('settled')
      expect(untracked()).toBe(1)
    })
  }

  it('waits for both the client’s side and the settlement before it is settled, in either order', async () => {
    const first = machine()
    first.m.on('responded')
    first.m.on('opened')
    first.m.on('done')
    await first.m.settle(charged('success'))
    expect([first.m.phase, first.untracked()]).toEqual(['ending', 0])
    first.m.on('closed')
    expect([first.m.phase, first.untracked()]).toEqual(['settled', 1])

    const second = machine()
    second.m.on('responded')
    second.m.on('left')
    expect([second.m.phase, second.untracked()]).toEqual(['closed', 0])
    await second.m.settle(released)
    expect([second.m.phase, second.untracked()]).toEqual(['settled', 1])
    let late = 0
    second.m.onSettled(() => late++)
    expect(late).toBe(1)
  })

  it('ignores what means nothing where the stream is, and everything once it is settled', async () => {
    const { m } = machine()
    expect(m.on('done')).toBe(false) // nothing opened yet
    expect(m.on('drained')).toBe(false)
    expect(m.writable).toBe(false)
    m.on('responded')
    expect([m.writable, m.on('readOn'), m.on('closed')]).toEqual([true, false, false])
    m.on('opened')
    m.on('left')
    expect(m.writable).toBe(false)
    await m.settle(charged('cancelled'))
    expect(m.phase).toBe('settled')
    for (const event of ['responded', 'opened', 'failed', 'done', 'broke', 'left', 'readOn', 'shutdown', 'drained', 'closed'] as const)
      expect(m.on(event)).toBe(false)
    expect(m.phase).toBe('settled')
  })

  it('settles once even when its charge throws before it returns a promise', async () => {
    let calls = 0
    const m = createStreamMachine<Served>({
      charge: () => {
        calls++
        throw new Error('priced nothing')
      },
      release: async () => {},
    })
    m.on('responded')
    m.on('opened')
    m.on('left')
    await expect(m.settle(charged('cancelled'))).rejects.toThrow('priced nothing')
    await expect(m.settle(released)).rejects.toThrow('priced nothing')
    expect(calls).toBe(1)
    expect(m.phase).toBe('settled')
  })
})
