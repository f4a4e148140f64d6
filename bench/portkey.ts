// Portkey's open-source gateway for the benchmark's "portkey" target (bench/README.md#portkey): installed on first use
// into bench/.portkey (not a dependency of the project, not in git), pinned, with the @hono/node-server its issue
// #1389 names as the last one that works (later ones fail its answers with "TypeError: immutable" on Node).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The Portkey gateway version the benchmark runs. */
export const PORTKEY_VERSION = '1.15.2'
const folder = process.env.BENCH_PORTKEY_DIR || join(dirname(fileURLToPath(import.meta.url)), '.portkey')

/** The path of Portkey's start script, installing the pinned version first when it is missing (a minute or so). */
export function ensurePortkey(): string {
  const script = join(folder, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js')
  const manifest = join(folder, 'node_modules', '@portkey-ai', 'gateway', 'package.json')
  if (existsSync(script) && existsSync(manifest)) return script
  mkdirSync(folder, { recursive: true })
  writeFileSync(
    join(folder, 'package.json'),
    `${JSON.stringify(
      {
        name: 'model-gateway-bench-portkey',
        private: true,
        dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION },
        overrides: { '@hono/node-server': '1.14.2' },
      },
      null,
      2,
    )}\n`,
  )
  console.log(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${folder} (once)`)
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: folder, stdio: ['ignore', 'inherit', 'inherit'] })
  return script
}
