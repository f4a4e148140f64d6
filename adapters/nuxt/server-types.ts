// The types of a Nuxt app's server (the Nitro tsconfig, .nuxt/tsconfig.server.json) as the Nuxt module (adapters/nuxt.ts)
// aligns them with the packages the server runs (docs/adapters.md#nuxt).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'

/** The part of a Nitro instance this module reads (`nitro:init`). */
export interface NitroInstance {
  options: { buildDir: string; alias: Record<string, string>; typescript: { tsconfigPath?: string } }
  hooks: { hook: (name: 'types:extend', fn: (types: { tsConfig?: TsConfig }) => void | Promise<void>) => void }
}
/** The part of a tsconfig this module writes. */
export interface TsConfig {
  compilerOptions?: { paths?: Record<string, string[]>; [key: string]: unknown }
  [key: string]: unknown
}

const packageDirOf = (file: string, name: string): string | undefined => {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === name) return dir
  }
  return undefined
}

/** Where `node_modules/<name>` is found walking up from `from`, as Node and TypeScript look for it. */
const findPackage = (from: string, name: string): string | undefined => {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dir === dirname(dir)) return undefined
  }
}

const packageName = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')
const withDot = (path: string) => (path.startsWith('.') ? path : `./${path}`)
const toPosix = (path: string) => path.split('\\').join('/')

/**
 * The declaration file of an `exports` target: its `types`, else its `import`'s, `default`'s or `node`'s (a package
 * that nests them by condition, as `{ import: { types, default }, require: { … } }`).
 */
function declarationsOf(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return undefined
  const record = value as Record<string, unknown>
  if (typeof record.types === 'string') return record.types
  return declarationsOf(record.import) ?? declarationsOf(record.default) ?? declarationsOf(record.node)
}

/** A package's declaration entry as an import specifier's target (the `.mjs` of a `.d.mts`), else its folder. */
function typesEntry(dir: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const exported = manifest.exports && typeof manifest.exports === 'object' && '.' in manifest.exports ? manifest.exports['.'] : manifest.exports
  const types = declarationsOf(exported) ?? manifest.types ?? manifest.typings
  if (typeof types !== 'string' || !existsSync(join(dir, types))) return dir
  return join(dir, types)
    .replace(/\.d\.mts$/, '.mjs')
    .replace(/\.d\.cts$/, '.cjs')
    .replace(/\.d\.ts$/, '.js')
}

/** The declaration file a relative specifier of a declaration file points at. */
function declarationOf(from: string, specifier: string): string | undefined {
  const target = resolve(dirname(from), specifier)
  const candidates = /\.mjs$/.test(target)
    ? [target.replace(/\.mjs$/, '.d.mts')]
    : /\.cjs$/.test(target)
      ? [target.replace(/\.cjs$/, '.d.cts')]
      : /\.js$/.test(target)
        ? [target.replace(/\.js$/, '.d.ts')]
        : /\.d\.[mc]?ts$/.test(target)
          ? [target]
          : [`${target}.d.ts`, `${target}.d.mts`, join(target, 'index.d.ts')]
  return candidates.find((file) => existsSync(file))
}

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\2/g

/**
 * Makes the server's TypeScript see the packages the server runs:
 * - `h3` is Nitro's h3 (v1), as Nitro aliases it when bundling; Nuxt maps it to whichever h3 the app's node_modules
 *   has at the top, which can be the gateway's h3 v2 that npm hoisted there;
 * - the gateway's declarations, which import its own h3 (v2), are read from a copy in the build folder whose bare
 *   imports point where the gateway's package finds them (a tsconfig `paths` entry applies to every file: `h3` cannot
 *   mean v1 for the app and v2 for the gateway otherwise). `paths` sends `model-gateway` to that copy.
 */
export function alignServerTypes(nitro: NitroInstance, types: { tsConfig?: TsConfig }, rootDir: string, warn: (message: string) => void) {
  const tsConfig = (types.tsConfig ??= {})
  const compilerOptions = (tsConfig.compilerOptions ??= {})
  const paths = (compilerOptions.paths ??= {})
  const tsconfigDir = dirname(resolve(nitro.options.buildDir, nitro.options.typescript.tsconfigPath ?? 'types/tsconfig.json'))
  const nitroH3 = nitro.options.alias.h3 && isAbsolute(nitro.options.alias.h3) ? packageDirOf(nitro.options.alias.h3, 'h3') : undefined
  if (nitroH3) paths.h3 = [withDot(toPosix(relative(tsconfigDir, nitroH3)))]

  let gatewayDir: string | undefined
  try {
    gatewayDir = packageDirOf(createRequire(join(rootDir, 'package.json')).resolve('model-gateway'), 'model-gateway')
  } catch {}
  if (!gatewayDir) return
  const copyRoot = join(nitro.options.buildDir, 'model-gateway/types')
  // Where TypeScript finds a package for a file of the copy: `paths` first, else node_modules up from the build folder.
  const seenFromCopy = (name: string) => (paths[name]?.[0] ? resolve(tsconfigDir, paths[name][0]) : findPackage(copyRoot, name))
  const manifest = JSON.parse(readFileSync(join(gatewayDir, 'package.json'), 'utf8'))
  const entries = Object.entries((manifest.exports ?? {}) as Record<string, unknown>)
    .flatMap(([subpath, target]) => {
      const types = declarationsOf(target)
      return types ? [[subpath, join(gatewayDir, types)] as const] : []
    })
    .filter(([, file]) => existsSync(file))
  const queue = entries.map(([, file]) => file)
  const copied = new Set<string>()
  let rewritten = false
  while (queue.length) {
    const file = queue.shift()!
    if (copied.has(file)) continue
    copied.add(file)
    const copy = join(copyRoot, relative(gatewayDir, file))
    const text = readFileSync(file, 'utf8').replace(SPECIFIER, (whole, lead: string, quote: string, specifier: string) => {
      if (specifier.startsWith('.')) {
        const target = declarationOf(file, specifier)
        if (target && !relative(gatewayDir, target).startsWith('..')) queue.push(target)
        return whole
      }
      if (specifier.startsWith('node:') || specifier !== packageName(specifier)) return whole
      const own = findPackage(gatewayDir, specifier)
      if (!own || own === seenFromCopy(specifier)) return whole
      rewritten = true
      return `${lead}${quote}${withDot(toPosix(relative(dirname(copy), typesEntry(own))))}${quote}`
    })
    mkdirSync(dirname(copy), { recursive: true })
    writeFileSync(copy, text)
  }
  if (!entries.length) warn('the installed model-gateway has no declaration files: useModelGateway() is untyped')
  if (!rewritten) return
  for (const [subpath, file] of entries) {
    if (subpath.includes('*')) continue
    paths[`model-gateway${subpath.slice(1)}`] = [withDot(toPosix(relative(tsconfigDir, join(copyRoot, relative(gatewayDir, file)))))]
  }
}
