// The top of a V8 CPU profile (.cpuprofile, as node:inspector's Profiler.stop or --cpu-prof write it): self time per
// function (the samples' time deltas, summed by function name, file and line) and per area (the gateway's own
// folders, each package, Node's internals, the garbage collector), for the results JSON.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

const round1 = (x: number) => Math.round(x * 10) / 10

/** Where a frame's code lives: `src/routes/chat.ts`, `node_modules/h3/…`, `node:internal/…`, or the URL as is. */
function place(url: string, root: string): string {
  if (!url) return ''
  if (url.startsWith('file://')) {
    const path = relative(root, fileURLToPath(url))
    return path.startsWith('..') ? fileURLToPath(url) : path
  }
  return url
}
function areaOf(functionName: string, where: string): string {
  if (!where) return functionName.startsWith('(') ? functionName : '(native)'
  const pkg = where.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  if (pkg) return `node_modules/${pkg[1]}`
  if (where.startsWith('node:')) return 'node: (internals)'
  const folder = where.match(/^(src|adapters|bench|test)\/(?:([^/]+)\/)?/)
  if (folder) return folder[2] && !folder[2].includes('.') ? `${folder[1]}/${folder[2]}/` : `${folder[1]}/`
  return where
}

export interface ProfileSummary {
  file: string
  duration_ms: number
  samples: number
  /** Time sampled while the thread was idle (waiting for I/O): not part of the percentages. */
  idle_ms: number
  busy_ms: number
  top_self: { function: string; where: string; self_ms: number; self_pct: number }[]
  by_area: { area: string; self_ms: number; self_pct: number }[]
}

export function summariseProfile(file: string, root: string, top = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  // timeDeltas[i] is the time from the previous sample to sample i: it is charged to sample i - 1's frame.
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i + 1] ?? 0
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + Math.max(0, delta))
  }
  const functions = new Map<string, { function: string; where: string; us: number }>()
  const areas = new Map<string, number>()
  let idle = 0
  let busy = 0
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame
    if (functionName === '(idle)') {
      idle += us
      continue
    }
    busy += us
    const where = place(url, root)
    const name = functionName || '(anonymous)'
    const key = `${name}\u0000${where}:${lineNumber + 1}`
    const entry = functions.get(key) ?? { function: name, where: where ? `${where}:${lineNumber + 1}` : '', us: 0 }
    entry.us += us
    functions.set(key, entry)
    const area = areaOf(name, where)
    areas.set(area, (areas.get(area) ?? 0) + us)
  }
  const pct = (us: number) => (busy ? round1((us / busy) * 100) : 0)
  return {
    file,
    duration_ms: round1((profile.endTime - profile.startTime) / 1000),
    samples: profile.samples.length,
    idle_ms: round1(idle / 1000),
    busy_ms: round1(busy / 1000),
    top_self: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ function: f.function, where: f.where, self_ms: round1(f.us / 1000), self_pct: pct(f.us) })),
    by_area: [...areas]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([area, us]) => ({ area, self_ms: round1(us / 1000), self_pct: pct(us) })),
  }
}
