/**
 * The upstream wire types of src/contracts/ are checked against the HTTP schemas of src/schemas/ at the type level
 * (./contracts-schemas.types.ts, docs/development.md#contracts). Vitest runs no type checker, so this compiles that
 * file: a drift between a schema and a wire type fails `npm test`, as it fails `npx tsc --noEmit`.
 */
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const checks = fileURLToPath(new URL('./contracts-schemas.types.ts', import.meta.url))

/** The compiler's errors in a file, as `line: message`. */
function compileErrors(file: string): string[] {
  const config = ts.readConfigFile(`${root}tsconfig.json`, ts.sys.readFile).config
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root)
  const program = ts.createProgram([file], { ...options, noEmit: true })
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0
    return `${line}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
  })
}

describe('the upstream wire types and the HTTP schemas', () => {
  it('agree: what each schema accepts and passes on is its wire type, and each wire field is one the schema accepts', () => {
    expect(compileErrors(checks)).toEqual([])
  }, 60_000)
})
