import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { createInterface } from 'node:readline/promises'
import { defineCommand } from 'citty'
import { CliError } from '../errors'
import { displayPath } from '../paths'
import { configArg, dataArg, out, say, withGateway } from '../common'

/** Asks a yes/no question on the terminal (stderr, so that stdout keeps the report); no unless answered y or yes. */
async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr })
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim())
  } finally {
    prompt.close()
  }
}

/** Writes a file whole or not at all: into a temporary file next to it, then renamed over it. */
function writeWhole(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, text)
  renameSync(temporary, file)
}

const update = defineCommand({
  meta: {
    name: 'update',
    description: 'Compare the catalogue with a maintained price table (LiteLLM’s or OpenRouter’s), show what changed, and write it to the catalogue file',
  },
  args: {
    from: {
      type: 'string',
      required: true,
      valueHint: 'file-or-url',
      description: 'LiteLLM’s model_prices_and_context_window.json or OpenRouter’s GET /api/v1/models answer: a file, or an http(s) URL to fetch',
    },
    yes: { type: 'boolean', description: 'Write the changes without asking (scripts); without it a terminal is asked, and nothing else is written' },
    ...configArg,
    ...dataArg,
  },
  async run({ args }) {
    // Loaded on demand, so that `--help` does not load them.
    const [
      { readSource, isUrl, DEFAULT_SOURCE_LIMITS },
      { readPriceTable },
      { planPriceUpdate, applyPriceUpdate, updateSize },
      { readCatalogueFile },
      { reportLines },
    ] = await Promise.all([
      import('../read-source'),
      import('../../catalogue/read-price-table'),
      import('../../catalogue/price-update'),
      import('../../catalogue/catalogue-file'),
      import('../catalogue-report'),
    ])
    const today = new Date().toISOString().slice(0, 10)
    const url = isUrl(args.from)
    const source = url ? args.from : resolve(args.from)
    if (url) say.start(`Fetching ${args.from}`)
    const json = await readSource(args.from, { ...DEFAULT_SOURCE_LIMITS, progress: (bytes) => say.info(`${(bytes / 1024 / 1024).toFixed(0)} MB read…`) })
    let table: ReturnType<typeof readPriceTable>
    try {
      table = readPriceTable(json, url ? args.from : displayPath(source))
    } catch (error) {
      throw new CliError((error as Error).message)
    }

    await withGateway({ command: 'catalogue', config: args.config, data: args.data, noStorage: true }, async (cli) => {
      const target = cli.catalogueFile
      if (!target) throw new CliError('the config gives `catalogue` as an object, so there is no file to write: give it the path of a file instead')
      const { providers, modelOverrides } = cli.gateway.context.options
      const plan = planPriceUpdate(providers, table, today)
      const rows = table.rows.length + [...table.skipped.values()].reduce((n, s) => n + s.count, 0)
      say.info(
        `${table.format === 'litellm' ? 'LiteLLM’s price table' : 'OpenRouter’s model list'}: ${rows} rows, compared with the models of ${providers.map((p) => p.slug).join(', ') || 'no provider'}`,
      )
      for (const line of reportLines(plan)) out(line)
      const size = updateSize(plan)
      const name = displayPath(target)
      if (!size) return say.success(`Nothing to change: ${name} stays as it is.`)
      const overridden = [...plan.changed, ...plan.added].filter((u) => modelOverrides[u.id]?.pricing).map((u) => u.id)
      if (overridden.length) say.warn(`modelOverrides in the config prices ${[...new Set(overridden)].join(', ')}: those prices win over the catalogue file`)
      const asked = !args.yes && process.stdin.isTTY
      if (!args.yes && !(asked && (await confirm(`Write ${size} model${size === 1 ? '' : 's'} to ${name}?`)))) {
        return say.info(asked ? 'Nothing written.' : 'nothing written: run again with --yes')
      }
      const next = applyPriceUpdate(existsSync(target) ? readCatalogueFile(target) : undefined, plan, { url: source, checked: today }, today)
      writeWhole(target, `${JSON.stringify(next, null, 2)}\n`)
      say.success(`Wrote ${size} model${size === 1 ? '' : 's'} to ${name}: the gateway loads it when it starts (restart one that runs).`)
    })
  },
})

/** `model-gateway catalogue`: the catalogue file (docs/catalogue.md). */
export const catalogueCommand = defineCommand({
  meta: { name: 'catalogue', description: 'Refresh the prices of the catalogue from a maintained price table, without a release' },
  subCommands: { update },
})
