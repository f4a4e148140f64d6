/** A settlement whose charge was made but whose `record` could not be written (an engine that cannot do both in one step). */
export class RecordNotWrittenError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the charge was made, its record was not written: ${(cause as Error)?.message ?? String(cause)}`)
    this.name = 'RecordNotWrittenError'
  }
}
