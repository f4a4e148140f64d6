import { page } from './page'
import type { TeamMember } from './team'

// The team demo's page, GET /team (playground/team.ts, docs/first-party.md): sign in as a member, chat with no key,
// from the page (the gateway's own route, with the session cookie) or on the server (the in-process client), see
// the member's budget (GET /me) and the team's spend per user (GET /team/spend).

const STYLE = `main{max-width:46rem}section{margin:1.2rem 0}h2{font-size:1.1rem;margin:0 0 .5rem}
form.inline{display:inline}button.secondary{background:#fff;color:#0a58ca}textarea{font:inherit;width:100%;padding:.4rem;border:1px solid #bbb;border-radius:8px}
table{width:100%;border-collapse:collapse}td,th{text-align:left;padding:.3rem;border-bottom:1px solid #eee}
.answer{margin:.4rem 0;white-space:pre-wrap}.cost,.status{color:#555;font-size:.9rem}`

/** The sign-in forms, one per member: each posts to /team/sign-in, which sets the team cookie. */
const signIn = (members: readonly TeamMember[]) => `<section aria-labelledby="sign-in-title"><h2 id="sign-in-title">Sign in</h2>
<p>Two users of the host app, each with a budget of their own in one team org. Signing in sets the host’s session cookie; the gateway’s
<code>session</code> option reads it, so the pages call the API with no key.</p>
${members.map((m) => `<form method="post" action="/team/sign-in" class="inline"><input type="hidden" name="user" value="${m.hostId}"><button type="submit">Sign in as ${m.name}</button></form>`).join('\n')}
</section>`

/** What a signed-in member sees: the budget, the chat, the team's spend. */
const signedIn = (member: TeamMember) => `<div>Signed in as <strong id="who">${member.name}</strong> (${member.email}).
<form method="post" action="/team/sign-out" class="inline"><button type="submit" class="secondary">Sign out</button></form></div>
<section aria-labelledby="budget-title"><h2 id="budget-title">Your budget</h2>
<table><tbody>
<tr><th>Credit limit (EUR)</th><td id="budget-limit">–</td></tr>
<tr><th>Used (EUR)</th><td id="budget-used">–</td></tr>
<tr><th>Remaining (EUR)</th><td id="budget-remaining">–</td></tr>
<tr><th>Requests per minute</th><td id="budget-rate">–</td></tr>
<tr><th>Team credits (EUR)</th><td id="team-credits">–</td></tr>
</tbody></table></section>
<section aria-labelledby="chat-title"><h2 id="chat-title">Chat with demo/echo</h2>
<textarea id="prompt" rows="2" aria-label="Message" placeholder="Say something…"></textarea>
<p><button type="button" id="ask-page">Ask from the page</button> <button type="button" class="secondary" id="ask-server">Ask on the server</button></p>
<p class="status" id="chat-status" role="status"></p>
<div id="answers" aria-live="polite"></div></section>
<section aria-labelledby="spend-title"><h2 id="spend-title">Spend per user</h2>
<table><thead><tr><th>User</th><th>Requests</th><th>Spend (EUR)</th></tr></thead><tbody id="spend"></tbody></table></section>`

/** The page's script: GET /me for the budget, the chat from the page and from the server, the spend per user. */
const script = (basePath: string) => `
const api = '${basePath}'
const $ = (id) => document.getElementById(id)
const json = (body) => ({ method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function loadBudget() {
  const res = await fetch(api + '/me', { credentials: 'same-origin' })
  if (!res.ok) return
  const { limits, credits } = await res.json()
  $('budget-limit').textContent = limits.credit_limit === null ? 'none' : limits.credit_limit + (limits.limit_reset ? ' (' + limits.limit_reset + ')' : '')
  $('budget-used').textContent = limits.limit_reset ? limits['usage_' + limits.limit_reset] : limits.usage
  $('budget-remaining').textContent = limits.limit_remaining ?? '–'
  $('budget-rate').textContent = limits.requests_per_minute ?? 'none'
  $('team-credits').textContent = credits.balance
}

async function loadSpend() {
  const res = await fetch('/team/spend', { credentials: 'same-origin' })
  if (!res.ok) return
  const { data } = await res.json()
  $('spend').replaceChildren(...data.map((row) => {
    const tr = document.createElement('tr')
    tr.dataset.user = row.email
    for (const text of [row.name + (row.email ? ' (' + row.email + ')' : ''), row.requests, row.usage]) {
      const td = document.createElement('td')
      td.textContent = text
      tr.append(td)
    }
    return tr
  }))
}

// From the page: the gateway's own route, the cookie sent along (same origin), no Authorization header.
// On the server: the playground's POST /team/ask, which calls the gateway in process as the same user.
async function ask(where) {
  const text = $('prompt').value.trim()
  if (!text) return
  $('chat-status').textContent = 'Asking…'
  const messages = [{ role: 'user', content: text }]
  const res = where === 'page'
    ? await fetch(api + '/chat/completions', json({ model: 'demo/echo', messages }))
    : await fetch('/team/ask', json({ text }))
  const body = await res.json()
  if (!res.ok) $('chat-status').textContent = 'Error ' + res.status + ': ' + body.error.message
  else {
    const div = document.createElement('div')
    div.className = 'answer'
    div.dataset.via = where
    const answer = document.createElement('span')
    answer.className = 'text'
    answer.textContent = (where === 'page' ? 'From the page: ' : 'On the server: ') + body.choices[0].message.content
    const cost = document.createElement('div')
    cost.className = 'cost'
    cost.textContent = body.usage.prompt_tokens + ' + ' + body.usage.completion_tokens + ' tokens, cost ' + body.usage.cost_eur + ' EUR'
    div.append(answer, cost)
    $('answers').prepend(div)
    $('chat-status').textContent = ''
    $('prompt').value = ''
  }
  await Promise.all([loadBudget(), loadSpend()])
}
$('ask-page').addEventListener('click', () => ask('page'))
$('ask-server').addEventListener('click', () => ask('server'))

await Promise.all([loadBudget(), loadSpend()])
document.body.dataset.ready = 'true'`

/** The team demo page: the sign-in forms, or the signed-in member's budget, chat and the team's spend. */
export function teamPage(basePath: string, member: TeamMember | undefined, members: readonly TeamMember[]): string {
  const intro = `<h1>Team demo (first-party, no key)</h1>
<p>The host app’s own users chat through the gateway without an API key, billed to their team and limited by their own budgets
(<a href="/">playground</a>).</p>`
  if (!member) return page('Team demo', `<main>${intro}${signIn(members)}</main>`, 'document.body.dataset.ready = "true"', STYLE)
  return page(`Team demo: ${member.name}`, `<main>${intro}${signedIn(member)}</main>`, script(basePath), STYLE)
}
