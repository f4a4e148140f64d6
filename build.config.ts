import { join } from 'node:path'
import { defineBuildConfig } from 'unbuild'

export default defineBuildConfig({
  entries: [
    { input: 'src/index', name: 'index' },
    { input: 'adapters/node', name: 'adapters/node' },
    { input: 'adapters/express', name: 'adapters/express' },
    { input: 'adapters/bun', name: 'adapters/bun' },
    { input: 'adapters/deno', name: 'adapters/deno' },
    // The runtime-neutral entry and the Workers adapter (docs/edge.md#the-edge-entry).
    { input: 'src/edge', name: 'edge' },
    { input: 'adapters/workers', name: 'adapters/workers' },
    { input: 'adapters/nuxt', name: 'adapters/nuxt' },
    // The AI SDK provider (docs/first-party.md#the-ai-sdk-provider): `model-gateway/ai-sdk`, types only from @ai-sdk/provider.
    { input: 'src/ai-sdk/index', name: 'ai-sdk' },
    // The Nuxt module's server runtime, file by file, for Nitro to bundle into the app's server (docs/adapters.md#nuxt):
    // `.js` (ES modules) with `.d.ts`, which TypeScript finds from the extensionless paths Nitro types routes with.
    { builder: 'mkdist', input: 'adapters/nuxt/runtime/', name: 'adapters/nuxt/runtime', format: 'esm', ext: 'js' },
    { input: 'src/cli/index', name: 'cli' },
  ],
  declaration: true,
  clean: true,
  rollup: { emitCJS: true },
  externals: ['ioredis', '@nuxt/kit', '@nuxt/schema'],
  hooks: {
    // Into the build's own output folder (dist/, or another one given to unbuild), under the entry's name.
    'mkdist:entry:options'(ctx, entry, options) {
      options.distDir = join(ctx.options.outDir, entry.name!)
    },
  },
})
