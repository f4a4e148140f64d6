import type { RetentionOptions } from '../options'

/**
 * The retention defaults (docs/retention.md): usage records 90 days, stored responses 30 and 100 MiB per org, a sweep
 * every 600 s, 50,000 records appended in the default in-memory storage; revoked keys as long as usage records.
 */
export const DEFAULT_RETENTION = {
  usageDays: 90,
  sweepIntervalSeconds: 600,
  responsesDays: 30,
  responsesBytesPerOrg: 100 * 1024 * 1024,
  inMemoryRecords: 50_000,
} as const

/**
 * Fills in and checks the `retention` option: `usageDays` and `responsesDays` positive, `sweepIntervalSeconds` 0 (off)
 * or positive, `responsesBytesPerOrg` and `inMemoryRecords` 0 (no bound) or a positive whole number, `revokedKeysDays`
 * 0 (the next sweep) or positive, by default `usageDays`.
 */
export function resolveRetention(options: RetentionOptions = {}): Required<RetentionOptions> {
  const usageDays = options.usageDays ?? DEFAULT_RETENTION.usageDays
  const sweepIntervalSeconds = options.sweepIntervalSeconds ?? DEFAULT_RETENTION.sweepIntervalSeconds
  if (!(Number.isFinite(usageDays) && usageDays > 0)) throw new TypeError('model-gateway: `retention.usageDays` must be a positive number')
  const responsesDays = options.responsesDays ?? DEFAULT_RETENTION.responsesDays
  if (!(Number.isFinite(responsesDays) && responsesDays > 0)) throw new TypeError('model-gateway: `retention.responsesDays` must be a positive number')
  if (!(Number.isFinite(sweepIntervalSeconds) && sweepIntervalSeconds >= 0))
    throw new TypeError('model-gateway: `retention.sweepIntervalSeconds` must be 0 (off) or a positive number')
  const inMemoryRecords = options.inMemoryRecords ?? DEFAULT_RETENTION.inMemoryRecords
  if (!(Number.isInteger(inMemoryRecords) && inMemoryRecords >= 0))
    throw new TypeError('model-gateway: `retention.inMemoryRecords` must be 0 (no bound) or a positive whole number')
  const responsesBytesPerOrg = options.responsesBytesPerOrg ?? DEFAULT_RETENTION.responsesBytesPerOrg
  if (!(Number.isSafeInteger(responsesBytesPerOrg) && responsesBytesPerOrg >= 0))
    throw new TypeError('model-gateway: `retention.responsesBytesPerOrg` must be 0 (no cap) or a positive whole number of bytes')
  const revokedKeysDays = options.revokedKeysDays ?? usageDays
  if (!(typeof revokedKeysDays === 'number' && Number.isFinite(revokedKeysDays) && revokedKeysDays >= 0))
    throw new TypeError('model-gateway: `retention.revokedKeysDays` must be 0 (at the next sweep) or a positive number of days')
  return { usageDays, sweepIntervalSeconds, responsesDays, responsesBytesPerOrg, inMemoryRecords, revokedKeysDays }
}
