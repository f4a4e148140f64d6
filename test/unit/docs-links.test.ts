/**
 * The README and docs/ as a reader meets them: the README is a front page that opens with the two commands a new user
 * runs (.ci/run runs them too), every relative link of the README, docs/*.md and bench/README.md reaches a file and,
 * with an anchor, one of its headings, and every `docs/<page>.md#anchor` the code's comments cite exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const read = (file: string) => readFileSync(join(root, file), 'utf8')
const pages = ['README.md', 'bench/README.md', ...readdirSync(join(root, 'docs')).map((file) => `docs/${file}`)].filter((file) => file.endsWith('.md'))

/** The text of a Markdown file outside its fenced code blocks. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '')

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes; repeats get -1, -2, … */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, heading] of prose(read(file)).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count ? `${base}-${count}` : base)
  }
  return anchors
}

/** Where a link of `file` points that does not reach the file or the heading it names. */
function brokenLinks(file: string): string[] {
  const broken: string[] = []
  for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target)) continue
    const [path, anchor] = target.split('#')
    const linked = path ? relative(root, resolve(root, dirname(file), path)) : file
    if (!existsSync(join(root, linked))) broken.push(`${file}: ${target} (no such file)`)
    else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) broken.push(`${file}: ${target} (no such heading)`)
  }
  return broken
}

/** The `.ts` files under a folder of the repository, node_modules and fixtures' installs left out. */
function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !join(entry.parentPath, entry.name).includes('node_modules'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
}

describe('the README', () => {
  it('opens with the two commands a new user runs, and stays a front page of at most 300 lines', () => {
    const readme = read('README.md')
    const lines = readme.trimEnd().split('\n')
    expect(lines.slice(0, 6)).toEqual([
      '# model-gateway',
      '',
      '```sh',
      'npm install && npm start   # the playground on http://127.0.0.1:3000, offline, with a demo key',
      'npm test                   # the test suite',
      '```',
    ])
    expect(lines.length).toBeLessThanOrEqual(300)
  })

  it('names no issue numbers, nor do the pages of docs/', () => {
    const named = ['README.md', ...pages.filter((file) => file.startsWith('docs/'))].flatMap((file) =>
      read(file)
        .split('\n')
        .filter((line) => /\bissues? \d+/i.test(line))
        .map((line) => `${file}: ${line}`),
    )
    expect(named).toEqual([])
  })
})

describe('links', () => {
  it('every relative link of the README, docs/ and bench/README.md reaches its file and heading', () => {
    expect(pages).toContain('docs/compatibility.md')
    expect(pages.flatMap(brokenLinks)).toEqual([])
  })

  it('every docs/<page>.md#<anchor> the code cites names a heading of that page', () => {
    const cited = ['src', 'adapters', 'playground', 'bench']
      .flatMap(sources)
      .flatMap((file) => [...read(file).matchAll(/\bdocs\/([a-z-]+\.md)#([a-z0-9-]+)/g)].map(([, page, anchor]) => ({ file, page, anchor })))
    expect(cited.length).toBeGreaterThan(50)
    const broken = cited.filter(({ page, anchor }) => !existsSync(join(root, 'docs', page)) || !anchorsOf(`docs/${page}`).has(anchor))
    expect(broken.map(({ file, page, anchor }) => `${file}: docs/${page}#${anchor}`)).toEqual([])
  })
})
