import { afterEach, describe, expect, it, vi } from 'vitest'
import { ABORT_GRACE_MS, createInFlight, isShuttingDown } from '../../src/http/in-flight'
import { GatewayError } from '../../src/errors'

// The in-flight count behind gateway.close()'s drain (docs/operations.md).
describe('the in-flight work of a gateway', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('counts work until each release (released twice counts once), and refuses new requests once closing, not more work of admitted ones', async () => {
    const inFlight = createInFlight()
    const a = inFlight.admit()
    const b = inFlight.track()
    expect(inFlight.size).toBe(2)
    a()
    a()
    expect(inFlight.size).toBe(1)
    const drained = inFlight.drain(10_000)
    expect(inFlight.closing).toBe(true)
    let refused: unknown
    try {
      inFlight.admit()
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(GatewayError)
    expect(isShuttingDown(refused)).toBe(true)
    expect((refused as GatewayError).status).toBe(503)
    expect((refused as GatewayError).headers).toEqual({ 'retry-after': '5' })
    const c = inFlight.track() // a stream of a request admitted before
    expect(inFlight.size).toBe(2)
    b()
    c()
    await drained
    expect(inFlight.signal.aborted).toBe(false)
  })

  it('takes any number of listeners on its signal without a leak warning', async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    const inFlight = createInFlight()
    const listeners = Array.from({ length: 100 }, () => () => undefined)
    for (const listener of listeners) inFlight.signal.addEventListener('abort', listener)
    await new Promise((resolve) => setTimeout(resolve, 10))
    process.off('warning', onWarning)
    for (const listener of listeners) inFlight.signal.removeEventListener('abort', listener)
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
  })

  it('resolves at once with nothing in flight, and a second drain is the same one', async () => {
    vi.useFakeTimers()
    const inFlight = createInFlight()
    const first = inFlight.drain(30_000)
    expect(inFlight.drain(30_000)).toBe(first)
    await first
    expect(vi.getTimerCount()).toBe(0)
  })

  it('aborts what still runs at the deadline with the 503, waits for it to end, and leaves no timer behind', async () => {
    vi.useFakeTimers()
    const inFlight = createInFlight()
    const release = inFlight.track()
    let done = false
    const drained = inFlight.drain(1000).then(() => (done = true))
    await vi.advanceTimersByTimeAsync(999)
    expect(inFlight.signal.aborted).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(inFlight.signal.aborted).toBe(true)
    expect(isShuttingDown(inFlight.signal.reason)).toBe(true)
    expect(done).toBe(false) // the aborted work bills and ends first
    release()
    await drained
    expect(vi.getTimerCount()).toBe(0)
  })

  it('goes on without work that does not end within the grace after the abort, and says so', async () => {
    vi.useFakeTimers()
    const inFlight = createInFlight()
    inFlight.track()
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() }
    const drained = inFlight.drain(100, logger)
    await vi.advanceTimersByTimeAsync(100 + ABORT_GRACE_MS)
    await drained
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('1 request(s) still running'))
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('did not end'))
    expect(vi.getTimerCount()).toBe(0)
  })
})
