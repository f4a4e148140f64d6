/** A JSON object whose fields are checked where they are read (typeof, Array.isArray). */
export type Json = Record<string, unknown>

/** The value as a JSON object to read fields of; an empty one for anything else (absent, null, a list, a scalar). */
export const objectOf = (value: unknown): Json => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {})

/** The value as a list of JSON objects (each read field by field); an empty list for anything but a list. */
export const objectsOf = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : [])
