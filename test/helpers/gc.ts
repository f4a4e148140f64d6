import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** V8's full garbage collection, as `node --expose-gc` gives it as `gc()` (the flag turned on here, for this process). */
export function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc')
}
