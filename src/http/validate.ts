import * as v from 'valibot'
import { invalidRequest } from '../errors'

/** Any valibot schema the routes validate with. */
export type AnySchema = v.GenericSchema<unknown, unknown>

const DEFAULT_MESSAGE_RE = /^Invalid [a-z ]+:/i

/** A message for one issue that names the rule, never the received value (it may be a secret). */
export function describeIssue(issue: v.BaseIssue<unknown>): string {
  if (!DEFAULT_MESSAGE_RE.test(issue.message)) return issue.message // a schema's own message
  if (issue.kind === 'schema') {
    if (issue.received === 'undefined') return 'is required'
    if (issue.type === 'strict_object' && issue.expected === 'never') return 'is not a known field'
    return `expected ${issue.expected ?? issue.type}`
  }
  const counted = Array.isArray(issue.input) ? 'items' : 'characters'
  switch (issue.type) {
    case 'min_length':
      return `must have at least ${issue.expected?.replace('>=', '')} ${counted}`
    case 'max_length':
      return `must have at most ${issue.expected?.replace('<=', '')} ${counted}`
    case 'length':
      return `must have exactly ${issue.expected} ${counted}`
    case 'min_value':
      return `must be ${issue.expected}`
    case 'max_value':
      return `must be ${issue.expected}`
    case 'integer':
      return 'must be an integer'
    case 'to_number':
      return 'must be a number'
    case 'url':
      return 'must be an absolute URL'
    case 'email':
      return 'must be an email address'
    case 'non_empty':
      return 'must not be empty'
    default:
      return `is invalid (${issue.type})`
  }
}

const depth = (issue: v.BaseIssue<unknown>): number => issue.path?.length ?? 0

/**
 * The issue to report: for a value no branch of a union took (`input` that is neither a string nor a list of valid
 * items), the deepest issue of its branches, recursively, so that the answer names the field that failed
 * (`input.3.call_id: is required`) rather than the union (`input: expected (string | Array)`); a union with a message
 * of its own (what it takes, in words) is reported with it.
 */
export function deepestIssue(issue: v.BaseIssue<unknown>): v.BaseIssue<unknown> {
  if (!DEFAULT_MESSAGE_RE.test(issue.message)) return issue // a schema's own message says what the union takes
  let best = issue
  for (const inner of issue.issues ?? []) {
    // A branch's issues are placed from the union's value: their path continues the union's.
    const nested = deepestIssue(inner)
    const candidate = { ...nested, path: [...(issue.path ?? []), ...(nested.path ?? [])] } as v.BaseIssue<unknown>
    if (depth(candidate) > depth(best)) best = candidate
  }
  return best
}

/** Validates input against a schema; the first issue becomes a 400 naming the field (`where` prefixes query/path names). */
export function parseInput<T extends AnySchema>(schema: T, input: unknown, where: 'body' | 'query' | 'path'): v.InferOutput<T> {
  // Every request body of the API is a JSON object (valibot would take an array for one).
  if (where === 'body' && (typeof input !== 'object' || input === null || Array.isArray(input))) {
    throw invalidRequest(input === undefined ? 'body: a JSON object is required' : 'body: expected a JSON object')
  }
  const result = v.safeParse(schema, input)
  if (result.success) return result.output
  const issue = deepestIssue(result.issues[0])
  const path = v.getDotPath(issue)
  const param = path ?? (where === 'body' ? undefined : where)
  const subject = path ?? (where === 'body' ? 'body' : `${where} parameters`)
  throw invalidRequest(`${subject}: ${describeIssue(issue)}`, param)
}
