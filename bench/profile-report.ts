// Reads a V8 CPU profile (.cpuprofile: `node --cpu-prof`, or the bench's profile phase) and prints the functions with
// the most self time and the most inclusive time (a function's samples plus its callees', each sample counted once
// per function however deep the recursion), as percentages of the samples and as µs per call when a count is given.
//   npx tsx bench/profile-report.ts <file.cpuprofile> [top=40] [calls] [filter: a path part, e.g. src/]
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const [file, topText, callsText, filter] = process.argv.slice(2)
if (!file) {
  console.error('usage: npx tsx bench/profile-report.ts <file.cpuprofile> [top] [calls] [filter]')
  process.exit(2)
}
const top = Number(topText) || 40
const calls = Number(callsText) || 0
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

const nameOf = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame
  const where = url.replace(/^file:\/\/.*?\/(src|adapters|bench|test|node_modules)\//, '$1/')
  return `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim()
}

const self = new Map<string, number>()
const inclusive = new Map<string, number>()
let total = 0
for (let i = 0; i < profile.samples.length; i++) {
  const us = profile.timeDeltas[i + 1] ?? 0
  total += us
  let node = byId.get(profile.samples[i])
  if (!node) continue
  self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + us)
  const seen = new Set<string>()
  while (node) {
    const name = nameOf(node)
    if (!seen.has(name)) {
      seen.add(name)
      inclusive.set(name, (inclusive.get(name) ?? 0) + us)
    }
    const up = parent.get(node.id)
    node = up === undefined ? undefined : byId.get(up)
  }
}

const print = (title: string, table: Map<string, number>) => {
  console.log(`\n${title}`)
  const rows = [...table].filter(([name]) => !filter || name.includes(filter)).sort((a, b) => b[1] - a[1])
  for (const [name, us] of rows.slice(0, top)) {
    const perCall = calls ? `  ${(us / calls).toFixed(2).padStart(7)} µs/call` : ''
    console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %${perCall}  ${name}`)
  }
}
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled${calls ? `, ${(total / calls) | 0} µs per call over ${calls} calls` : ''}`)
print('self time', self)
print('inclusive time', inclusive)
