/** A JSON object read field by field: chat's answers and the request's items, each field checked where it is read. */
// biome-ignore lint/suspicious/noExplicitAny: fields are checked where they are read (typeof, Array.isArray)
export type Json = Record<string, any>
