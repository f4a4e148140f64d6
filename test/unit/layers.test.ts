import { cruise, type ICruiseOptions, type IViolation } from 'dependency-cruiser'
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The layers of docs/development.md#layers, as .dependency-cruiser.cjs states them: no import circle (type imports
// included), no import of a layer above, the contracts at the bottom, the adapters on the public entry point.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** A violation as one line: the rule, the import, and the circle when it is one. */
function describeViolation(violation: IViolation): string {
  const cycle = violation.cycle?.length ? ` (circle: ${[violation.from, ...violation.cycle.map((step) => step.name)].join(' → ')})` : ''
  return `${violation.rule.name}: ${violation.from} → ${violation.to}${cycle}`
}

/** Cruises `paths` (relative to `baseDir`) with the repository's rules; the violations, one line each. */
async function violationsOf(paths: string[], baseDir = root): Promise<string[]> {
  const options: ICruiseOptions = { ...(await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'))), baseDir }
  const result = await cruise(paths, options, undefined, { tsConfig: extractTSConfig(join(root, 'tsconfig.json')) })
  if (typeof result.output === 'string') throw new Error('dependency-cruiser answered text, not a cruise result')
  return result.output.summary.violations.map(describeViolation)
}

// A cruise of src/ takes a few seconds, more on a busy machine.
describe('layers', () => {
  it('src/ and adapters/ break no layer rule and have no import circle', async () => {
    const violations = await violationsOf(['src', 'adapters'])
    expect(violations.length, `${violations.length} layer violations (docs/development.md#layers):\n${violations.join('\n')}\n`).toBe(0)
  }, 60_000)

  it('catches a circle, an import of a layer above and a contract importing src/ (test/fixtures/layers)', async () => {
    const violations = await violationsOf(['src'], join(root, 'test/fixtures/layers'))
    expect(violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^no-circular: src\/stores\/(accounts|keys)\.ts → /),
        'layer-services: src/stores/usage.ts → src/routes/usage.ts',
        'contracts-import-nothing: src/contracts/account.ts → src/stores/accounts.ts',
      ]),
    )
  }, 60_000)
})
