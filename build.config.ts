import { defineBuildConfig } from 'unbuild'

export default defineBuildConfig({
  entries: [
    { input: 'src/index', name: 'index' },
    { input: 'adapters/node', name: 'adapters/node' },
    { input: 'adapters/express', name: 'adapters/express' },
    { input: 'adapters/bun', name: 'adapters/bun' },
    { input: 'adapters/nuxt', name: 'adapters/nuxt' },
    { input: 'src/cli/index', name: 'cli' },
  ],
  declaration: true,
  clean: true,
  rollup: { emitCJS: true },
  externals: ['ioredis', '@nuxt/kit', '@nuxt/schema'],
})
