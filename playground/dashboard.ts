// The playground's usage dashboard (README "The playground"): spend and requests per day as a chart, by model and
// provider and by key, the recent generations of this page, and the health of the providers behind the models used.
// It reads the gateway's own routes with the page's key: GET /activity (and ?group_by=api_key), GET /generation,
// GET /models/{author}/{slug}/endpoints. The page's key is an ordinary one (from PKCE), so /activity shows its own
// requests only (docs/usage.md#get-apiv1activity); a management key would see the whole org's. Markup and script
// are strings the page (playground/ui.ts) puts in place.

/** The dashboard's section. */
export const dashboardSection = `<section aria-labelledby="usage-title" id="usage">
<h2 id="usage-title">Usage</h2>
<div class="row"><button type="button" class="secondary" id="usage-refresh">Refresh usage</button><span class="status" id="usage-status" role="status"></span></div>
<svg id="usage-chart" role="img" aria-label="Spend and requests per day" width="100%" height="170" viewBox="0 0 700 170"></svg>
<h3>By model and provider</h3>
<table><thead><tr><th>Model</th><th>Provider</th><th>Requests</th><th>Tokens</th><th>Spend (EUR)</th></tr></thead><tbody id="usage-by-model"></tbody></table>
<h3>By key</h3>
<table><thead><tr><th>Key (hash)</th><th>Requests</th><th>Spend (EUR)</th></tr></thead><tbody id="usage-by-key"></tbody></table>
<h3>Recent generations</h3>
<table><thead><tr><th>Generation</th><th>Model</th><th>Provider</th><th>Latency</th><th>Tokens</th><th>Cost (EUR)</th></tr></thead><tbody id="recent"></tbody></table>
<h3>Provider health</h3>
<table><thead><tr><th>Model</th><th>Provider</th><th>State</th><th>Uptime</th><th>Latency p50</th></tr></thead><tbody id="health"></tbody></table>
</section>`

/** The dashboard's script: `recordGeneration(id, model)` for the chat, `loadUsage()` to draw it all. */
export const dashboardScript = `
const recentIds = []
function recordGeneration(id, model) {
  if (!id) return
  recentIds.unshift({ id, model })
  recentIds.splice(10)
}
const cell = (text) => { const td = document.createElement('td'); td.textContent = text; return td }
const row = (...cells) => { const tr = document.createElement('tr'); tr.append(...cells.map(cell)); return tr }
const eur = (n) => (Math.round(n * 1e9) / 1e9).toString()
const STATES = { '0': 'up', '-1': 'failed recently', '-2': 'half-open', '-3': 'open' }

// Bars of spend per day (newest right), the requests above each bar.
function drawChart(days) {
  const svg = $('usage-chart')
  const ns = 'http://www.w3.org/2000/svg'
  const max = Math.max(...days.map((d) => d.usage), 1e-12)
  const width = 700 / days.length
  const shapes = days.flatMap((d, i) => {
    const h = Math.round((d.usage / max) * 120)
    const bar = document.createElementNS(ns, 'rect')
    Object.entries({ x: i * width + 2, y: 140 - h, width: width - 4, height: h, fill: '#2563eb', 'data-date': d.date, 'data-requests': d.requests }).forEach(([k, v]) => bar.setAttribute(k, v))
    const title = document.createElementNS(ns, 'title')
    title.textContent = d.date + ': ' + d.requests + ' requests, ' + eur(d.usage) + ' EUR'
    bar.append(title)
    const count = document.createElementNS(ns, 'text')
    Object.entries({ x: i * width + width / 2, y: 135 - h, 'text-anchor': 'middle', 'font-size': 10 }).forEach(([k, v]) => count.setAttribute(k, v))
    count.textContent = d.requests ? String(d.requests) : ''
    const label = document.createElementNS(ns, 'text')
    Object.entries({ x: i * width + width / 2, y: 158, 'text-anchor': 'middle', 'font-size': 9 }).forEach(([k, v]) => label.setAttribute(k, v))
    label.textContent = d.date.slice(5)
    return [bar, count, label]
  })
  svg.replaceChildren(...shapes)
}

async function loadUsage() {
  if (!key) return
  $('usage-status').textContent = 'Loading…'
  const [activity, byKey] = await Promise.all([
    fetch(api + '/activity', authed()).then((r) => r.json()),
    fetch(api + '/activity?group_by=api_key', authed()).then((r) => r.json()),
  ])
  // The last 14 days, today included, zero where nothing was billed.
  const today = new Date()
  const days = Array.from({ length: 14 }, (_, i) => {
    const date = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - 13 + i)).toISOString().slice(0, 10)
    const rows = activity.data.filter((r) => r.date === date)
    return { date, usage: rows.reduce((n, r) => n + r.usage, 0), requests: rows.reduce((n, r) => n + r.requests, 0) }
  })
  drawChart(days)
  const byModel = new Map()
  for (const r of activity.data) {
    const k = r.model + ' ' + r.provider_name
    const t = byModel.get(k) ?? { model: r.model, provider: r.provider_name, requests: 0, tokens: 0, usage: 0 }
    t.requests += r.requests
    t.tokens += r.prompt_tokens + r.completion_tokens
    t.usage += r.usage
    byModel.set(k, t)
  }
  $('usage-by-model').replaceChildren(...[...byModel.values()].map((t) => row(t.model, t.provider, String(t.requests), String(t.tokens), eur(t.usage))))
  const keys = new Map()
  for (const r of byKey.data) {
    const t = keys.get(r.api_key_hash) ?? { requests: 0, usage: 0 }
    t.requests += r.requests
    t.usage += r.usage
    keys.set(r.api_key_hash, t)
  }
  $('usage-by-key').replaceChildren(...[...keys].map(([hash, t]) => row(hash.slice(0, 12) + '…', String(t.requests), eur(t.usage))))
  const generations = await Promise.all(recentIds.map(({ id }) => fetch(api + '/generation?id=' + encodeURIComponent(id), authed()).then((r) => (r.ok ? r.json() : null))))
  $('recent').replaceChildren(
    ...generations.filter(Boolean).map(({ data: g }) => row(g.id.slice(0, 16) + '…', g.model, g.provider_name, g.latency + ' ms', g.tokens_prompt + ' + ' + g.tokens_completion, eur(g.usage))),
  )
  const models = [...new Set([...byModel.values()].map((t) => t.model).concat(recentIds.map((r) => r.model)))]
  const health = await Promise.all(models.map((m) => fetch(api + '/models/' + m + '/endpoints').then((r) => (r.ok ? r.json() : null))))
  $('health').replaceChildren(
    ...health.filter(Boolean).flatMap(({ data }) =>
      data.endpoints.map((e) => row(data.id, e.provider_name, STATES[String(e.status)] ?? String(e.status), e.uptime_last_30m === null ? '–' : Math.round(e.uptime_last_30m) + ' %', e.latency_last_30m ? Math.round(e.latency_last_30m.p50) + ' ms' : '–')),
    ),
  )
  $('usage-status').textContent = ''
}
$('usage-refresh').addEventListener('click', () => loadUsage())
`
