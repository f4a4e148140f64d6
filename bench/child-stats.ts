// What every child of the benchmark reports: the connections it accepted and opened (node:diagnostics_channel) and,
// on { type: 'stats' } over IPC, its CPU time and memory, plus what `extra` adds. { type: 'gc' } runs a full garbage
// collection first when the child was started with --expose-gc (the memory phase), then answers as 'stats' does.
import { subscribe } from 'node:diagnostics_channel'

/** Counts connections and answers { type: 'stats' } on the IPC channel with CPU, memory, the counts and `extra()`. */
export function answerStats(extra: () => Record<string, unknown> = () => ({})): void {
  let accepted = 0
  let opened = 0
  subscribe('net.server.socket', () => accepted++)
  subscribe('net.client.socket', () => opened++)
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type !== 'stats' && message?.type !== 'gc') return
    if (message.type === 'gc') (globalThis as { gc?: () => void }).gc?.()
    process.send?.({ type: 'stats', id: message.id, cpu: process.cpuUsage(), memory: process.memoryUsage(), accepted, opened, ...extra() })
  })
}
