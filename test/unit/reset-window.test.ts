import { describe, expect, it } from 'vitest'
import { resetWindow } from '../../src/billing/key-usage'

// The windows by the calendar, as Date gives them (what resetWindow computed per call before it kept a day's three).
function byCalendar(reset: 'daily' | 'weekly' | 'monthly', now: number) {
  const date = new Date(now)
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
  if (reset === 'daily') return { start: day, end: day + 86_400_000 }
  if (reset === 'weekly') {
    const start = day - ((date.getUTCDay() + 6) % 7) * 86_400_000
    return { start, end: start + 7 * 86_400_000 }
  }
  return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) }
}

describe('resetWindow', () => {
  it('gives the calendar’s day, week (from Monday) and month, at their edges and in any order of days', () => {
    const edges = [
      Date.UTC(2026, 10, 28, 23, 59, 59, 999),
      Date.UTC(2026, 10, 29), // a Sunday, then the Monday a week starts on
      Date.UTC(2026, 10, 30),
      Date.UTC(2026, 11, 31, 12),
      Date.UTC(2027, 0, 1), // a new year, month and day at once
      Date.UTC(2028, 1, 29, 6), // a leap day
      Date.UTC(2028, 2, 1) - 1,
      Date.UTC(2026, 10, 28, 23, 59, 59, 999) + 0.5, // a fraction of a millisecond
    ]
    let seed = 7
    const random = () => {
      seed = (seed * 48271) % 2147483647
      return Date.UTC(2020, 0, 1) + (seed % (10 * 365)) * 86_400_000 + (seed % 86_400_000)
    }
    const times = [...edges, ...Array.from({ length: 500 }, random), ...edges.reverse()]
    for (const now of times)
      for (const reset of ['daily', 'weekly', 'monthly'] as const) expect(resetWindow(reset, now), `${reset} at ${now}`).toEqual(byCalendar(reset, now))
  })

  it('hands out windows nobody can change', () => {
    const window = resetWindow('daily', Date.UTC(2026, 10, 28, 5))
    expect(() => ((window as { start: number }).start = 0)).toThrow(TypeError)
    expect(resetWindow('daily', Date.UTC(2026, 10, 28, 6)).start).toBe(Date.UTC(2026, 10, 28))
  })
})
