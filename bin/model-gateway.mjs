#!/usr/bin/env node
// The `model-gateway` command (`npx model-gateway --help`): runs the built CLI, dist/cli.mjs.
// From a checkout without a build, run the sources instead: `npx tsx src/cli/main.ts --help`.
import('../dist/cli.mjs').then(
  (cli) => cli.main(),
  (error) => {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('cli.mjs')) throw error
    process.stderr.write('model-gateway: dist/cli.mjs is missing; build the package first (npm run build)\n')
    process.exit(1)
  },
)
