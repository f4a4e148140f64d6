// The second last written (its ISO text up to the seconds): requests of one second share it.
let cachedSecond = Number.NaN
let cachedPrefix = ''

/**
 * `new Date(ms).toISOString()` for an epoch-ms time (`2026-11-28T03:04:05.678Z`), several times cheaper per call: the
 * text up to the second is built once per second, only the milliseconds per call (usage records' `created_at`).
 */
export function isoTime(time: number): string {
  const ms = Math.trunc(time) // as Date does with a fraction of a millisecond
  const second = Math.floor(ms / 1000)
  if (second !== cachedSecond) {
    const text = new Date(second * 1000).toISOString()
    cachedSecond = second
    cachedPrefix = text.slice(0, text.length - 4) // up to and with the '.' before the milliseconds
  }
  const millis = ms - second * 1000
  return `${cachedPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`
}
