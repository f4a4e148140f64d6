// The layers of the gateway and the import rules between them (docs/development.md#layers), checked by
// dependency-cruiser with type imports counted: `npm run lint:layers`, and in `npm test` (test/unit/layers.test.ts).

/**
 * The layers, lowest first. A module may import its own layer and the layers below it, never one above. A module
 * belongs to the first layer one of whose paths it matches (so src/billing/money.ts is base, the rest of billing
 * core); every module of src/ belongs to one layer (rule `layer-unassigned`).
 */
const LAYERS = [
  // The contracts every layer shares: capability table, Provider, wire and price types, host facts, error kinds.
  { name: 'contracts', paths: ['^src/contracts/'] },
  // Helpers that know nothing of the gateway's services: errors, logger, version, ids and keys, HTTP helpers, the
  // valibot schemas of the API, tracing, money arithmetic, and audio bytes read and written (formats, durations, WAV).
  {
    name: 'base',
    paths: [
      '^src/(errors|logger|version)[.]ts$',
      '^src/(crypto|http|schemas|telemetry|runtime)/',
      '^src/billing/(money|decimal)[.]ts$',
      '^src/audio/(formats|wav)[.]ts$',
      // The personal-data detectors import nothing (docs/policies.md#personal-data).
      '^src/policies/pii[.]ts$',
    ],
  },
  // The upstream providers (the demo provider among them).
  { name: 'providers', paths: ['^src/providers/'] },
  // The gateway's services over storage and memory: the catalogue, the stores, the metrics, the router's health tracker.
  { name: 'services', paths: ['^src/(catalogue|stores|metrics)/', '^src/routing/health[.]ts$'] },
  // What every request runs on: the context and options, routing (planning, attempts), billing (holds, charges), and
  // what a generation record holds (ids, finish reasons), and the policies (the built-in rules routing applies, the hooks).
  { name: 'core', paths: ['^src/(context|options)[.]ts$', '^src/(routing|billing|generation|policies)/'] },
  // The capability pipeline the features serve through.
  { name: 'pipeline', paths: ['^src/pipeline/'] },
  // The features: one folder per capability or API area.
  { name: 'features', paths: ['^src/(chat|completions|messages|responses|embeddings|images|audio|native|auth|byok|maintenance|cache)/'] },
  // The edge: the HTTP routes, the gateway's assembly, the package's entry points (the AI SDK provider among them),
  // the in-process client, the admin API, the CLI.
  { name: 'edge', paths: ['^src/(routes|cli|client|ai-sdk)/', '^src/(gateway|index|edge|public|admin|openapi)[.]ts$'] },
]

const ALL_LAYERS = LAYERS.flatMap((layer) => layer.paths)

// One rule per layer but the top one: nothing of it imports a layer above it.
const layerRules = LAYERS.slice(0, -1).map((layer, index) => {
  const below = LAYERS.slice(0, index).flatMap((l) => l.paths)
  const upTo = LAYERS.slice(0, index + 1).flatMap((l) => l.paths)
  const above = LAYERS.slice(index + 1)
  return {
    name: `layer-${layer.name}`,
    severity: 'error',
    comment: `${layer.name} (${layer.paths.join(', ')}) imports only ${LAYERS.slice(0, index + 1)
      .map((l) => l.name)
      .join(', ')}: never ${above.map((l) => l.name).join(', ')} (docs/development.md#layers)`,
    from: { path: layer.paths, ...(below.length ? { pathNot: below } : {}) },
    to: { path: above.flatMap((l) => l.paths), pathNot: upTo },
  }
})

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle, type imports included: a type two modules share goes into a types file both import (docs/development.md#layers)',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contracts-import-nothing',
      severity: 'error',
      comment: 'src/contracts/ is the bottom: it imports nothing else of src/',
      from: { path: '^src/contracts/' },
      to: { path: '^src/', pathNot: '^src/contracts/' },
    },
    {
      name: 'src-not-dev-folders',
      severity: 'error',
      comment: 'The package never imports the playground, the tests or the benchmarks',
      from: { path: '^src/' },
      to: { path: '^(playground|test|bench)/' },
    },
    {
      name: 'core-not-adapters',
      severity: 'error',
      comment:
        'The core (src/) never imports adapters/: the adapters are built on it. The CLI is the one exception: `model-gateway serve` serves over the package’s own Node adapter (its public entry point model-gateway/node)',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^adapters/' },
    },
    {
      name: 'adapters-public-entry',
      severity: 'error',
      comment:
        'An adapter imports only the package’s public entry points (src/index.ts, and src/edge.ts for edge adapters) and the other adapters, as a host would',
      from: { path: '^adapters/' },
      to: { path: '^src/', pathNot: '^src/(index|edge)[.]ts$' },
    },
    {
      name: 'layer-unassigned',
      severity: 'error',
      comment: 'Every module of src/ belongs to a layer: a new folder or top-level file gets its place in LAYERS (.dependency-cruiser.cjs)',
      from: { path: '^src/', pathNot: ALL_LAYERS },
      to: {},
    },
    {
      name: 'layer-unassigned-target',
      severity: 'error',
      comment: 'Every module of src/ belongs to a layer: a new folder or top-level file gets its place in LAYERS (.dependency-cruiser.cjs)',
      from: {},
      to: { path: '^src/', pathNot: ALL_LAYERS },
    },
    ...layerRules,
  ],
  options: {
    // Type imports count: a circle or a layer broken by a type is still one.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
}
