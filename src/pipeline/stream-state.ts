/**
 * Where a settled stream is (docs/money.md#what-is-charged-when-a-request-ends):
 * - `opening`: its provider is being opened, nothing sent yet (a failure is an HTTP error);
 * - `waiting`: the 200 went out, keep-alive comments while the stream takes its provider;
 * - `flowing`: the provider's chunks go to the client, at its pace;
 * - `draining`: the client left a model that may reason in hidden tokens: read on, silently, for its usage report;
 * - `ending`: the stream ends in the client's sight (done, or failed): settled, then its last bytes;
 * - `cut`: the gateway's shutdown cut it: the failure told, settled, then its last bytes;
 * - `closed`: nothing more goes to the client (it left, or the last bytes went out); its settlement may still run;
 * - `settled`: closed and settled: nothing of the stream is left in flight.
 */
export type StreamPhase = 'opening' | 'waiting' | 'flowing' | 'draining' | 'ending' | 'cut' | 'closed' | 'settled'

/**
 * What happens to a stream. A chunk changes no phase; a deadline or an exception is one of these: the request's
 * deadline before a provider opened it is `failed`, an exception of a dialect or of the billing after it began `broke`.
 */
export type StreamEvent =
  /** The response went out: keep-alives until the stream takes its provider. */
  | 'responded'
  /** The stream took its provider's first chunk (speech, which answers only then, takes it while opening). */
  | 'opened'
  /** No provider opened it: every attempt failed, the request's deadline passed, or the shutdown stopped the opening. */
  | 'failed'
  /** The provider ended the stream. */
  | 'done'
  /** The stream failed after it began: the provider, the dialect, or the billing or last bytes of its end threw. */
  | 'broke'
  /** The client went away. */
  | 'left'
  /** The client went away from a model that may reason in hidden tokens: read on for the provider's usage report. */
  | 'readOn'
  /** The gateway's drain deadline passed (docs/operations.md). */
  | 'shutdown'
  /** The read-on is over: the usage came, the stream ended or failed, or the wait (`abortedStreamUsageWaitMs`) ended. */
  | 'drained'
  /** The stream's last bytes went out. */
  | 'closed'

// The phase each event leads to from each phase; an event missing here means nothing there (the stream ended
// another way first) and changes nothing. A shutdown while opening stops the opening, which then fails; one while
// ending (already billing) or once closed leaves it as it was. An end whose billing or last bytes fail is told as a
// failure after it began (`broke` while ending); one cut by the shutdown is not (it only logs it).
const NEXT: Record<StreamPhase, Partial<Record<StreamEvent, StreamPhase>>> = {
  opening: { responded: 'waiting', opened: 'flowing', failed: 'closed' },
  waiting: { opened: 'flowing', failed: 'ending', left: 'closed', shutdown: 'cut' },
  flowing: { done: 'ending', broke: 'ending', left: 'closed', readOn: 'draining', shutdown: 'cut' },
  draining: { drained: 'closed', shutdown: 'draining' },
  ending: { broke: 'ending', left: 'closed', closed: 'closed' },
  cut: { left: 'closed', closed: 'closed' },
  closed: {},
  settled: {},
}

/** How a stream's one settlement ends its hold: charged (the usage reported, else estimated) for what served it, or released. */
export type StreamOutcome<S> = { kind: 'charged'; served: S; status: 'success' | 'error' | 'cancelled' } | { kind: 'released' }

/** What a settlement does: bills what served the stream (giving what was billed, `B`) or releases the hold. */
export interface StreamSettlement<S, B = unknown> {
  /** Bills the stream (the hold replaced by the charge); resolves with what was billed (the amounts the end shows). */
  charge(served: S, status: 'success' | 'error' | 'cancelled'): Promise<B>
  /** Releases the hold (no provider served the stream); never throws. */
  release(): Promise<void>
}

/** A stream's state machine: its phase, the events that move it, and its one settlement. */
export interface StreamMachine<S, B = unknown> {
  /** Where the stream is now. */
  readonly phase: StreamPhase
  /** True while bytes may go to the client (`waiting`, `flowing`, `ending`, `cut`). */
  readonly writable: boolean
  /** The outcome of the settlement, once settle() was called. */
  readonly outcome: StreamOutcome<S> | undefined
  /** Moves the stream to the phase the event leads to; false (nothing changes) when it means nothing where the stream is. */
  on(event: StreamEvent): boolean
  /**
   * The only place a stream is billed or its hold released: the first call settles as `outcome` says; every later
   * call, whatever it asks, answers the first one's result. Resolves with what was billed (undefined when released).
   */
  settle(outcome: StreamOutcome<S>): Promise<B | undefined>
  /** Calls `listener` once the stream is closed and settled (at once when it is already). */
  onSettled(listener: () => void): void
}

/** A stream's state machine in `opening`, settling through `settlement`. */
export function createStreamMachine<S, B = unknown>(settlement: StreamSettlement<S, B>): StreamMachine<S, B> {
  let settling: Promise<B | undefined> | undefined
  let settlementOver = false
  const listeners: (() => void)[] = []
  // Plain fields, read on every chunk (getters cost a call each on the stream's hot path).
  const machine: { -readonly [K in keyof StreamMachine<S, B>]: StreamMachine<S, B>[K] } = {
    phase: 'opening',
    writable: false,
    outcome: undefined,
    on(event) {
      const next = NEXT[machine.phase][event]
      if (!next) return false
      moveTo(next)
      reachSettled()
      return true
    },
    settle(asked) {
      if (settling) return settling
      machine.outcome = asked
      let settled: Promise<B | undefined>
      try {
        settled = asked.kind === 'charged' ? settlement.charge(asked.served, asked.status) : settlement.release().then(() => undefined)
      } catch (error) {
        settled = Promise.reject(error)
      }
      settling = settled.finally(() => {
        settlementOver = true
        reachSettled()
      })
      return settling
    },
    onSettled(listener) {
      if (machine.phase === 'settled') listener()
      else listeners.push(listener)
    },
  }
  const moveTo = (phase: StreamPhase) => {
    machine.phase = phase
    machine.writable = WRITABLE.has(phase)
  }
  const reachSettled = () => {
    if (machine.phase !== 'closed' || !settlementOver) return
    moveTo('settled')
    for (const listener of listeners.splice(0)) listener()
  }
  return machine
}

// The phases in which bytes may go to the client.
const WRITABLE: ReadonlySet<StreamPhase> = new Set(['waiting', 'flowing', 'ending', 'cut'])
