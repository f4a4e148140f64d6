import type { H3Event } from 'h3'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { clientAbortController } from '../../src/http/client-abort'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

describe('clientAbortController', () => {
  it('follows a fetch Request’s signal even after the Request itself is garbage-collected', async () => {
    // gateway.fetch (Express with a body parser, Bun, …): the host aborts the signal it gave the Request when the
    // client leaves. undici's Request follows that signal only weakly, so the controller must keep it alive.
    const client = new AbortController()
    const controller = (() => clientAbortController({ req: new Request('http://gateway.test/', { signal: client.signal }) } as unknown as H3Event))()
    for (let i = 0; i < 5; i++) {
      gc()
      await new Promise((resolve) => setImmediate(resolve))
    }
    client.abort()
    expect(controller.signal.aborted).toBe(true)
  })
})
