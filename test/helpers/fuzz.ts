/**
 * Building blocks of the fuzz test (test/integration/fuzz.test.ts): a seeded PRNG, hostile JSON fragments written as
 * raw JSON text (so that `1e400` or a lone `\ud800` reach the gateway exactly as written), and a way to put one
 * fragment at any path of a seed body.
 */

/** A deterministic PRNG (mulberry32): the same seed gives the same cases. */
export function prng(seed: number) {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    /** An integer in [0, n). */
    int: (n: number) => Math.floor(next() * n),
    /** One item of a list. */
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)],
  }
}

/** A raw JSON text with a name for the failure report. */
export interface Fragment {
  name: string
  json: string
}

const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n)
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
const deepMixed = (n: number) => `${'[{"k":'.repeat(n)}null${'}]'.repeat(n)}`

/** Hostile values, as JSON text: deep nesting, huge numbers, wrong types, odd unicode, NUL, long strings. */
export const HOSTILE: Fragment[] = [
  ...[10, 1000, 100_000].flatMap((n) => [
    { name: `array nested ${n}`, json: deepArray(n) },
    { name: `object nested ${n}`, json: deepObject(n) },
    { name: `mixed nested ${n}`, json: deepMixed(n) },
  ]),
  ...[
    '1e308',
    '1e400',
    '-1e400',
    '-0',
    '9007199254740993',
    '1e-400',
    '-1',
    '1.5',
    '0',
    '123456789012345678901234567890',
    '"1e400"',
    '"-1"',
    '"NaN"',
    '"0x10"',
  ].map((json) => ({ name: `number ${json}`, json })),
  { name: 'string for a number', json: '"12"' },
  { name: 'empty object', json: '{}' },
  { name: 'empty array', json: '[]' },
  { name: 'array of objects', json: '[{},{"a":1}]' },
  { name: 'null', json: 'null' },
  { name: 'true', json: 'true' },
  { name: 'false', json: 'false' },
  { name: 'empty string', json: '""' },
  { name: 'emoji', json: '"😀👍🏽‍🔥"' },
  { name: 'RTL text', json: '"\u202eשלום عالم"' },
  { name: 'lone high surrogate', json: '"\\ud800"' },
  { name: 'lone low surrogate', json: '"x\\udfffy\\ud800"' },
  { name: 'NUL in a string', json: '"a\\u0000b"' },
  { name: 'NUL key', json: '{"\\u0000":1,"a\\u0000":"\\u0000"}' },
  { name: 'proto keys', json: '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}' },
  { name: 'long string', json: `"${'x'.repeat(200_000)}"` },
  { name: 'long array', json: `[${Array.from({ length: 20_000 }, (_, i) => `"s${i}"`).join(',')}]` },
  { name: 'object with many keys', json: `{${Array.from({ length: 5_000 }, (_, i) => `"k${i}":${i}`).join(',')}}` },
  { name: 'not a UUID', json: '"123e4567-e89b-02d3-a456-426614174000"' },
]

/** Whole bodies that are not an object of the route's shape. */
export const HOSTILE_BODIES: Fragment[] = [
  { name: 'empty body', json: '' },
  { name: 'whitespace body', json: ' \n\t ' },
  { name: 'null body', json: 'null' },
  { name: 'array body', json: '[]' },
  { name: 'array of objects body', json: '[{}]' },
  { name: 'string body', json: '"x"' },
  { name: 'number body 1e400', json: '1e400' },
  { name: 'deep body', json: deepArray(100_000) },
  { name: 'deep object body', json: deepObject(100_000) },
  { name: 'truncated body', json: '{"model":' },
  { name: 'two values', json: '{}{}' },
  { name: 'BOM', json: '\ufeff{}' },
  { name: 'NUL key body', json: '{"\\u0000":null}' },
  { name: 'proto body', json: '{"__proto__":{"admin":true}}' },
]

/** Odd keys for an extra field, as JSON string text. */
export const HOSTILE_KEYS = ['"\\u0000"', '"__proto__"', '"constructor"', '"😀"', '""', `"${'k'.repeat(10_000)}"`]

/** Values for query parameters, already as they go into the URL (some deliberately malformed). */
export const HOSTILE_QUERY_VALUES = [
  '',
  '-1',
  '0',
  '1.5',
  '1e400',
  '9007199254740993',
  '99999999999999999999999999',
  'abc',
  '%00',
  '%ZZ',
  '%',
  '%F0%9F%98%80',
  '%E2%80%AEevil',
  '%ED%A0%80',
  'x'.repeat(4_000),
  'true',
  'null',
  '[]',
  '{}',
  '%5B%5D',
]

/** Path parameters that are not UUIDs (and one that is, in capitals). */
export const HOSTILE_PATH_PARAMS = [
  'not-a-uuid',
  '%00',
  '%ZZ',
  '%F0%9F%98%80',
  '123e4567-e89b-02d3-a456-426614174000',
  '00000000-0000-0000-0000-00000000000g',
  'x'.repeat(3_000),
  '..%2F..%2Fetc%2Fpasswd',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '%20',
  '1e400',
  '-0',
]

/** Every path of a JSON value: objects' keys and arrays' indices, the root excluded. */
export function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const paths: (string | number)[][] = []
  if (Array.isArray(value)) for (const [i, item] of value.entries()) paths.push([...prefix, i], ...pathsOf(item, [...prefix, i]))
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) paths.push([...prefix, key], ...pathsOf(item, [...prefix, key]))
  }
  return paths
}

const MARK = '\u0001fuzz\u0001'

/** The seed's JSON text with the value at `path` replaced by the raw fragment. */
export function withFragment(seed: unknown, path: (string | number)[], fragment: string): string {
  const copy = structuredClone(seed) as Record<string | number, unknown>
  let node = copy
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>
  node[path[path.length - 1]] = MARK
  return JSON.stringify(copy).replace(JSON.stringify(MARK), () => fragment)
}

/** The seed's JSON text with an extra field `key` (raw JSON string text) in the object at `path`. */
export function withExtraKey(seed: unknown, path: (string | number)[], key: string, fragment: string): string {
  const copy = structuredClone(seed) as Record<string | number, unknown>
  let node = copy
  for (const step of path) node = node[step] as Record<string | number, unknown>
  node[MARK] = 0
  return JSON.stringify(copy).replace(`${JSON.stringify(MARK)}:0`, () => `${key}:${fragment}`)
}

/** The field names of a valibot object schema (through pipes, optional and nullable wrappers). */
export function fieldNames(schema: unknown): string[] {
  let node = schema as { wrapped?: unknown; entries?: Record<string, unknown> } | undefined
  while (node?.wrapped) node = node.wrapped as typeof node
  return Object.keys(node?.entries ?? {})
}
