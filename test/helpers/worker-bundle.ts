import { build, type Metafile } from 'esbuild'

/** A Worker's entry bundled as workerd loads it (one ES module, workerd's conditions), with what it imports. */
export async function bundleWorker(entry: string): Promise<{ code: string; imports: Metafile['outputs'][string]['imports'] }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser', 'import', 'default'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:*'],
    write: false,
    metafile: true,
    logLevel: 'silent',
  })
  const [output] = Object.values(result.metafile.outputs)
  return { code: result.outputFiles[0].text, imports: output.imports }
}
