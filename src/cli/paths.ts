import { isAbsolute, relative } from 'node:path'

/** A path as the user will recognise it: relative to the working directory when inside it. */
export function displayPath(path: string, cwd = process.cwd()): string {
  const rel = relative(cwd, path)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}

/** A word as a POSIX shell reads it back: as it is when safe, else in single quotes. */
export const shellQuote = (text: string): string => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`)
