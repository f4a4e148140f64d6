import * as v from 'valibot'

/** A UUID (docs/api.md#conventions): 8-4-4-4-12 hex, version 1–8, variant 8/9/a/b, plus the all-zero and all-f UUIDs. */
export const UUID_RE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|0{8}-0{4}-0{4}-0{4}-0{12}|f{8}-f{4}-f{4}-f{4}-f{12})$/i

/** A UUID as the API accepts it (docs/api.md#conventions). */
export const uuidSchema = v.pipe(v.string(), v.regex(UUID_RE, 'must be a UUID'))

/** A path with one `{id}` UUID parameter. */
export const idParamsSchema = v.object({ id: uuidSchema })

/** An exact decimal amount as a string without exponent. */
export const decimalString = v.pipe(v.string(), v.regex(/^-?\d+(?:\.\d+)?$/, 'must be a decimal string'))

/** A query parameter holding an integer within ±(2^53 − 1) (docs/limits.md#numbers). */
export const queryInteger = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^[+-]?\d+$/, 'must be an integer'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  )

/** The error envelope (docs/errors.md#the-envelope). */
export const errorEnvelopeSchema = v.object({
  error: v.object({
    code: v.pipe(v.number(), v.integer()),
    type: v.string(),
    message: v.string(),
    param: v.optional(v.string()),
    metadata: v.optional(v.record(v.string(), v.unknown())),
  }),
})

/** An integer JSON number. */
export const int = () => v.pipe(v.number(), v.integer())

/** An integer JSON number within ±(2^53 − 1): larger ones cannot be told apart once parsed. */
export const safeInt = (min = -Number.MAX_SAFE_INTEGER) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(Number.MAX_SAFE_INTEGER))

const PLAIN_DECIMAL_RE = /^\d{1,20}(?:\.\d{1,20})?$/

/** True for a finite non-negative number, or a plain non-negative decimal string of at most 20 + 20 digits. */
export const isNonNegativeDecimal = (value: number | string): boolean =>
  typeof value === 'number' ? Number.isFinite(value) && value >= 0 : PLAIN_DECIMAL_RE.test(value)

/** A non-negative amount (a price limit, …): a finite JSON number or a plain decimal string ("0.5"), never "1e3". */
export const nonNegativeDecimal = v.pipe(
  v.union([v.number(), v.string()], 'expected a number or a decimal string'),
  v.check(isNonNegativeDecimal, 'must be a finite non-negative number or a plain decimal string such as "0.5"'),
)
