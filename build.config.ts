import { defineBuildConfig } from 'unbuild'

export default defineBuildConfig({
  entries: [
    { input: 'src/index', name: 'index' },
    { input: 'adapters/node', name: 'adapters/node' },
  ],
  declaration: true,
  clean: true,
  rollup: { emitCJS: true },
  externals: ['ioredis'],
})
