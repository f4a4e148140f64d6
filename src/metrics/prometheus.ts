/*
 * A small Prometheus registry (docs/operations.md#metrics): counters, histograms and gauges with labels, rendered in
 * the text exposition format (0.0.4) that prom-client writes and Prometheus scrapes. The gateway's label values come
 * from its configuration and routes (models, providers, route paths, statuses), so their number is bounded.
 */

type Labels = Record<string, string>

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
const labelText = (labels: Labels, extra?: Labels): string => {
  const all = extra ? { ...labels, ...extra } : labels
  const parts = Object.keys(all).map((name) => `${name}="${escapeLabel(all[name])}"`)
  return parts.length ? `{${parts.join(',')}}` : ''
}
const keyOf = (labels: Labels) => JSON.stringify(labels)
const number = (value: number) => (Number.isFinite(value) ? String(value) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN')

/** A metric the registry renders. */
interface Metric {
  render(): string
}

/** A counter: only goes up. */
export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>()
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    this.series(labels).value += by
  }
  /** The series of `labels` (created at 0), for a caller that keeps it and adds to its `value` itself. */
  series(labels: Labels): { value: number } {
    const key = keyOf(labels)
    let series = this.values.get(key)
    if (!series) this.values.set(key, (series = { labels, value: 0 }))
    return series
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`]
    for (const { labels, value } of this.values.values()) lines.push(`${this.name}${labelText(labels)} ${number(value)}`)
    return lines.join('\n')
  }
}

/** A histogram: observations counted in cumulative buckets, with their sum and count. */
export class Histogram implements Metric {
  private readonly values = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number; observe(value: number): void }>()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}
  /** Records one observation for `labels`. */
  observe(labels: Labels, value: number): void {
    this.series(labels).observe(value)
  }
  /** The series of `labels` (created empty), for a caller that keeps it and records its observations through it. */
  series(labels: Labels): { observe(value: number): void } {
    const key = keyOf(labels)
    let series = this.values.get(key)
    if (!series) {
      const created = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }
      const buckets = this.buckets
      series = Object.assign(created, {
        observe(value: number) {
          for (let i = 0; i < buckets.length; i++) if (value <= buckets[i]) created.counts[i]++
          created.sum += value
          created.count++
        },
      })
      this.values.set(key, series)
    }
    return series
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`]
    for (const { labels, counts, sum, count } of this.values.values()) {
      for (let i = 0; i < this.buckets.length; i++) lines.push(`${this.name}_bucket${labelText(labels, { le: String(this.buckets[i]) })} ${counts[i]}`)
      lines.push(`${this.name}_bucket${labelText(labels, { le: '+Inf' })} ${count}`)
      lines.push(`${this.name}_sum${labelText(labels)} ${number(sum)}`)
      lines.push(`${this.name}_count${labelText(labels)} ${count}`)
    }
    return lines.join('\n')
  }
}

/** A gauge whose series are read when the registry renders. */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly collect: () => { labels: Labels; value: number }[],
  ) {}
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`]
    for (const { labels, value } of this.collect()) lines.push(`${this.name}${labelText(labels)} ${number(value)}`)
    return lines.join('\n')
  }
}

/** Renders metrics in the text exposition format, one after another. */
export const renderMetrics = (metrics: Metric[]): string => `${metrics.map((m) => m.render()).join('\n')}\n`
