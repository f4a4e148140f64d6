import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { configDefaults, defineConfig } from 'vitest/config'

// Three files at a time on a 2-core machine (vitest's default is one less than the cores: one, although most files
// wait on sockets, timers and child processes; with two the suite took 8½ minutes, with three 6½, every file
// passing), and the files that take longest (a Nuxt build and dev server, packing and
// installing the package, the CLI's child processes) first: on a fresh checkout vitest has no timings to order by,
// and a long file that starts last runs alone at the end while the other workers idle.
const SLOW_FIRST = [
  'test/adapters/nuxt.test.ts',
  'test/integration/package.test.ts',
  'test/adapters/nuxt-dev.test.ts',
  'test/integration/cli.test.ts',
  'test/adapters/node-express.test.ts',
  'test/integration/holds.test.ts',
  'test/integration/storage.test.ts',
]

/** Vitest's order (by the last run's timings), with the known slow files moved to the front. */
class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = SLOW_FIRST.findIndex((path) => file.moduleId.endsWith(path))
      return at === -1 ? SLOW_FIRST.length : at
    }
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b))
  }
}

// Files that `npm test` leaves out, each run by a script of its own (docs/development.md): the Nuxt fixture built for
// Cloudflare and served in workerd (`npm run test:edge-nuxt`, which sets MG_EDGE_NUXT), a minute of build.
const OWN_SCRIPT = process.env.MG_EDGE_NUXT ? [] : ['test/edge/nuxt-cloudflare.test.ts']

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...OWN_SCRIPT],
    testTimeout: 20_000,
    hookTimeout: 120_000,
    maxWorkers: 3,
    sequence: { sequencer: SlowFirstSequencer },
  },
})
