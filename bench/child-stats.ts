// What every child of the benchmark reports: the connections it accepted and opened (node:diagnostics_channel) and,
// on { type: 'stats' } over IPC, its CPU time and memory, plus what `extra` adds. { type: 'gc' } runs a full garbage
// collection first when the child was started with --expose-gc (the memory phase), then answers as 'stats' does.
// { type: 'promises-start' } and { type: 'promises-stop' } count the promises made in between (v8.promiseHooks: the
// promises phase), answered as { promises }.
import { subscribe } from 'node:diagnostics_channel'
import { promiseHooks } from 'node:v8'

/** Counts connections and answers { type: 'stats' } on the IPC channel with CPU, memory, the counts and `extra()`. */
export function answerStats(extra: () => Record<string, unknown> = () => ({})): void {
  let accepted = 0
  let opened = 0
  subscribe('net.server.socket', () => accepted++)
  subscribe('net.client.socket', () => opened++)
  let promises = 0
  let stopCounting: ReturnType<typeof promiseHooks.onInit> | undefined
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type === 'promises-start') {
      promises = 0
      stopCounting?.()
      stopCounting = promiseHooks.onInit(() => {
        promises++
      })
      return process.send?.({ type: 'promises', id: message.id })
    }
    if (message?.type === 'promises-stop') {
      stopCounting?.()
      stopCounting = undefined
      return process.send?.({ type: 'promises', id: message.id, promises })
    }
    if (message?.type !== 'stats' && message?.type !== 'gc') return
    if (message.type === 'gc') (globalThis as { gc?: () => void }).gc?.()
    process.send?.({ type: 'stats', id: message.id, cpu: process.cpuUsage(), memory: process.memoryUsage(), accepted, opened, ...extra() })
  })
}
