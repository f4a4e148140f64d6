import { dashboardScript, dashboardSection } from './dashboard'

/** The playground's web page: chat with streaming, credits and costs, BYOK keys, usage, all offline (no external assets). */
export function playgroundPage(basePath: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>model-gateway playground</title>
<style>
*{box-sizing:border-box}body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f5f5f7}
header{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.8rem 1.2rem;background:#fff;border-bottom:1px solid #ddd}
header h1{font-size:1.1rem;margin:0 auto 0 0}main{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:1rem;padding:1rem;max-width:72rem;margin:auto}
@media (max-width:800px){main{grid-template-columns:1fr}}
section{background:#fff;border-radius:10px;padding:1rem;box-shadow:0 1px 4px #0001}h2{font-size:1rem;margin:0 0 .6rem}h3{font-size:.85rem;margin:.9rem 0 .3rem}#usage{grid-column:1/-1}
button{font:inherit;padding:.4rem .9rem;border-radius:7px;border:1px solid #0a58ca;background:#0a58ca;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#0a58ca}button:disabled{opacity:.5;cursor:default}button:focus-visible,select:focus-visible,textarea:focus-visible,input:focus-visible{outline:3px solid #f90;outline-offset:1px}
select,textarea,input{font:inherit;padding:.4rem;border:1px solid #bbb;border-radius:7px;width:100%}
#transcript{min-height:12rem;max-height:28rem;overflow:auto;border:1px solid #eee;border-radius:7px;padding:.6rem;margin:.6rem 0;background:#fafafa}
.msg{margin:.3rem 0;white-space:pre-wrap}.msg.user b{color:#0a58ca}.msg.assistant b{color:#1a7f37}.cost{color:#666;font-size:.85rem}
.row{display:flex;gap:.5rem;align-items:center}.row>*{flex:1}.row>button{flex:0 0 auto}
table{width:100%;border-collapse:collapse;font-size:.9rem}td,th{text-align:left;padding:.3rem;border-bottom:1px solid #eee}
.status{color:#666;font-size:.9rem;min-height:1.2rem}code{background:#f3f3f5;border-radius:4px;padding:0 .3rem}
</style>
</head>
<body>
<header>
<h1>model-gateway playground</h1>
<span>Credits: <strong id="balance">–</strong> EUR</span>
<span id="who" class="status"></span>
<span id="key-limits" class="status" title="The key's limits and built-in rules (GET /key, docs/policies.md)"></span>
<button type="button" id="connect">Connect (get a key)</button>
<a href="${basePath}/openapi.json">OpenAPI</a>
<a href="/example-app">Example app</a>
</header>
<main>
<section aria-labelledby="chat-title">
<h2 id="chat-title">Chat</h2>
<div class="row">
<p><label for="model">Model</label><select id="model"></select></p>
<p><label for="chat-api">API</label><select id="chat-api">
<option value="chat">Chat Completions (/chat/completions)</option>
<option value="responses">OpenAI Responses (/responses)</option>
<option value="messages">Anthropic Messages (/messages)</option>
</select></p>
</div>
<div id="transcript" aria-live="polite"></div>
<form id="chat-form" class="row">
<label for="prompt" class="visually-hidden" hidden>Message</label>
<textarea id="prompt" rows="2" placeholder="Say something…" aria-label="Message"></textarea>
<button type="submit" id="send">Send</button>
</form>
<p class="status" id="chat-status" role="status"></p>
</section>
<section aria-labelledby="byok-title">
<h2 id="byok-title">Your provider keys (BYOK)</h2>
<table><thead><tr><th>Provider</th><th>Label</th><th></th></tr></thead><tbody id="byok-list"></tbody></table>
<form id="byok-form">
<p><label for="byok-provider">Provider</label><select id="byok-provider"></select></p>
<p><label for="byok-key">Key</label><input id="byok-key" type="password" autocomplete="off" placeholder="sk-…"></p>
<div class="row"><button type="submit" id="byok-add">Add key</button><button type="button" class="secondary" id="byok-test-new">Test without saving</button></div>
</form>
<p class="status" id="byok-status" role="status"></p>
</section>
<section aria-labelledby="audio-title">
<h2 id="audio-title">Speech and transcription</h2>
<form id="speak-form">
<p><label for="speech-model">Speech model</label><select id="speech-model"></select></p>
<p><label for="speech-text">Text to speak</label><input id="speech-text" value="Hello from the playground"></p>
<button type="submit" id="speak">Speak</button>
</form>
<audio id="speech-audio" controls></audio>
<form id="transcribe-form">
<p><label for="transcription-model">Transcription model</label><select id="transcription-model"></select></p>
<p><label for="audio-file">Audio file (wav, mp3, flac, m4a, ogg, webm, aac)</label><input id="audio-file" type="file" accept="audio/*"></p>
<div class="row"><button type="submit" id="transcribe">Transcribe the file</button><button type="button" class="secondary" id="transcribe-last">Transcribe the speech above</button></div>
</form>
<p class="status" id="audio-status" role="status"></p>
</section>
${dashboardSection}
</main>
<script type="module">
const api = '${basePath}'
const $ = (id) => document.getElementById(id)
const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
let key = localStorage.getItem('mg-playground-key')
const authed = (init = {}) => ({ ...init, headers: { ...(init.headers || {}), authorization: 'Bearer ' + key, 'content-type': 'application/json' } })

// Getting a key: the PKCE flow, with this page as the callback.
$('connect').addEventListener('click', async () => {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)))
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
  const state = base64url(crypto.getRandomValues(new Uint8Array(12)))
  sessionStorage.setItem('mg-pkce', JSON.stringify({ verifier, state }))
  location.href = api + '/auth?' + new URLSearchParams({ callback_url: location.origin + '/', code_challenge: challenge, state })
})
async function finishConnect() {
  const query = new URLSearchParams(location.search)
  if (!query.has('code')) return
  const saved = JSON.parse(sessionStorage.getItem('mg-pkce') || 'null')
  sessionStorage.removeItem('mg-pkce')
  history.replaceState(null, '', '/')
  if (!saved || saved.state !== query.get('state')) return ($('who').textContent = 'Connection failed: state mismatch')
  const res = await fetch(api + '/auth/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: query.get('code'), code_verifier: saved.verifier }) })
  const body = await res.json()
  if (!res.ok) return ($('who').textContent = 'Connection failed: ' + body.error.message)
  key = body.key
  localStorage.setItem('mg-playground-key', key)
}

async function refreshMe() {
  if (!key) return ($('who').textContent = 'Not connected')
  const res = await fetch(api + '/me', authed())
  if (!res.ok) { key = null; localStorage.removeItem('mg-playground-key'); return ($('who').textContent = 'Not connected') }
  const me = await res.json()
  $('who').textContent = me.email
  $('balance').textContent = me.credits.balance
  $('connect').textContent = 'Reconnect'
  await refreshKey()
}

// The key's limits and built-in rules (GET /key): credit limit, rate limit, tokens, spend and requests in flight,
// allowlists, max price, data policy.
async function refreshKey() {
  const res = await fetch(api + '/key', authed())
  if (!res.ok) return ($('key-limits').textContent = '')
  const k = (await res.json()).data
  const list = (l) => (l ? l.join(', ') : 'any')
  const prices = k.max_price ? Object.entries(k.max_price).map(([f, p]) => f + ' ' + p).join(', ') : 'none'
  $('key-limits').textContent = [
    'Key limit: ' + (k.limit === null ? 'none' : k.limit + ' EUR' + (k.limit_reset ? ' ' + k.limit_reset : '') + ' (' + k.limit_remaining + ' left)'),
    'rate: ' + (k.rate_limit.requests < 0 ? 'none' : k.rate_limit.requests + '/' + k.rate_limit.interval),
    'tokens: ' + ([k.tokens_per_minute && k.tokens_per_minute + '/min', k.tokens_per_day && k.tokens_per_day + '/day'].filter(Boolean).join(', ') || 'none'),
    'spend: ' + (k.spend_limit ? k.spend_limit + ' EUR/' + (k.spend_window || 'day') : 'none'),
    'in flight: ' + (k.max_in_flight || 'none'),
    'models: ' + list(k.allowed_models),
    'providers: ' + list(k.allowed_providers),
    'max price: ' + prices,
    'ZDR: ' + (k.enforce_zdr ? 'yes' : 'no'),
  ].join(' · ')
}

async function loadModels() {
  const { data } = await (await fetch(api + '/models')).json()
  $('model').replaceChildren(...data.filter((m) => m.supported_api_endpoints.some((e) => e.endsWith('/chat/completions'))).map((m) => new Option(m.name + ' (' + m.id + ')', m.id)))
  const serving = (endpoint) => data.filter((m) => m.supported_api_endpoints.some((e) => e.endsWith(endpoint))).map((m) => new Option(m.name + ' (' + m.id + ')', m.id))
  $('speech-model').replaceChildren(...serving('/audio/speech'))
  $('transcription-model').replaceChildren(...serving('/audio/transcriptions'))
  const wanted = new URLSearchParams(location.search).get('model') || 'demo/echo'
  if ([...$('model').options].some((o) => o.value === wanted)) $('model').value = wanted
  const providers = (await (await fetch(api + '/providers')).json()).data.filter((p) => p.byok.supported)
  $('byok-provider').replaceChildren(...providers.map((p) => new Option(p.name, p.slug)))
}

function addMessage(role, text) {
  const div = document.createElement('div')
  div.className = 'msg ' + role
  const who = document.createElement('b')
  who.textContent = role === 'user' ? 'You: ' : 'Assistant: '
  const body = document.createElement('span')
  body.textContent = text
  div.append(who, body)
  $('transcript').append(div)
  return body
}

// The three APIs the chat box can speak (docs/capabilities.md): the request each takes, the text and usage of its stream.
const CHAT_APIS = {
  chat: {
    path: '/chat/completions',
    body: (model, messages) => ({ model, stream: true, messages }),
    error: (body) => body.error.message,
    read(chunk, usage) {
      if (chunk.error) throw new Error(chunk.error.message)
      if (chunk.usage) Object.assign(usage, { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens, cost: chunk.usage.cost_eur, byok: chunk.usage.is_byok })
      return chunk.choices?.[0]?.delta?.content ?? ''
    },
  },
  responses: {
    path: '/responses',
    body: (model, messages) => ({ model, stream: true, store: false, input: messages.map((m) => ({ role: m.role, content: m.content })) }),
    error: (body) => body.error.message,
    read(event, usage) {
      if (event.type === 'response.failed') throw new Error(event.response?.error?.message ?? 'the response failed')
      if (event.type === 'error') throw new Error(event.message ?? 'the response failed')
      const done = event.type === 'response.completed' || event.type === 'response.incomplete' ? event.response.usage : undefined
      if (done) Object.assign(usage, { input: done.input_tokens, output: done.output_tokens, cost: done.cost_eur, byok: done.is_byok })
      return event.type === 'response.output_text.delta' ? event.delta : ''
    },
  },
  messages: {
    path: '/messages',
    body: (model, messages) => ({ model, stream: true, max_tokens: 1024, messages }),
    error: (body) => body.error.message,
    read(event, usage) {
      if (event.type === 'error') throw new Error(event.error.message)
      // message_delta carries the whole usage (the gateway knows the input tokens only at the end), and the cost.
      if (event.type === 'message_delta' && event.usage) Object.assign(usage, { input: event.usage.input_tokens, output: event.usage.output_tokens, cost: event.usage.cost_eur, byok: event.usage.is_byok })
      return event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? event.delta.text : ''
    },
  },
}

const history_ = []
$('chat-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const text = $('prompt').value.trim()
  if (!text) return
  if (!key) return ($('chat-status').textContent = 'Connect first to get a key.')
  $('prompt').value = ''
  $('send').disabled = true
  addMessage('user', text)
  history_.push({ role: 'user', content: text })
  const out = addMessage('assistant', '')
  $('chat-status').textContent = 'Streaming…'
  try {
    const wire = CHAT_APIS[$('chat-api').value]
    const res = await fetch(api + wire.path, authed({ method: 'POST', body: JSON.stringify(wire.body($('model').value, history_)) }))
    if (!res.ok) throw new Error(wire.error(await res.json()))
    recordGeneration(res.headers.get('x-generation-id'), $('model').value)
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ''
    const usage = {}
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let cut
      while ((cut = buffer.indexOf('\\n\\n')) !== -1) {
        const block = buffer.slice(0, cut)
        buffer = buffer.slice(cut + 2)
        for (const line of block.split('\\n')) {
          if (!line.startsWith('data: ') || line === 'data: [DONE]') continue
          out.textContent += wire.read(JSON.parse(line.slice(6)), usage)
        }
      }
    }
    history_.push({ role: 'assistant', content: out.textContent })
    if (usage.input !== undefined) {
      const cost = document.createElement('div')
      cost.className = 'cost'
      cost.textContent = usage.input + ' + ' + usage.output + ' tokens' + (usage.cost !== undefined ? ', cost ' + usage.cost + ' EUR' : '') + (usage.byok ? ' (your key)' : '')
      out.parentElement.after(cost)
    }
    $('chat-status').textContent = ''
  } catch (error) {
    $('chat-status').textContent = 'Error: ' + error.message
  } finally {
    $('send').disabled = false
    refreshMe()
    loadUsage()
  }
})

async function loadByok() {
  if (!key) return
  const { data } = await (await fetch(api + '/byok', authed())).json()
  $('byok-list').replaceChildren(...data.map((c) => {
    const row = document.createElement('tr')
    const cells = [c.name, c.label].map((t) => { const td = document.createElement('td'); td.textContent = t; return td })
    const actions = document.createElement('td')
    const test = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary', textContent: 'Test' })
    test.addEventListener('click', () => runTest(api + '/byok/' + c.id + '/test', undefined))
    const remove = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary', textContent: 'Delete' })
    remove.setAttribute('aria-label', 'Delete ' + c.label)
    remove.addEventListener('click', async () => {
      await fetch(api + '/byok/' + c.id, authed({ method: 'DELETE' }))
      $('byok-status').textContent = 'Deleted ' + c.label
      loadByok()
    })
    actions.append(test, ' ', remove)
    row.append(...cells, actions)
    return row
  }))
}
async function runTest(url, body) {
  $('byok-status').textContent = 'Testing…'
  const res = await fetch(url, authed({ method: 'POST', body: body && JSON.stringify(body) }))
  const result = await res.json()
  $('byok-status').textContent = res.ok
    ? (result.data.success ? 'The key works: ' : 'The key failed: ') + result.data.checks.map((c) => c.target + ' ' + (c.ok ? 'ok' : c.message)).join('; ')
    : 'Error: ' + result.error.message
}
$('byok-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  if (!key) return ($('byok-status').textContent = 'Connect first to get a key.')
  const res = await fetch(api + '/byok', authed({ method: 'POST', body: JSON.stringify({ provider: $('byok-provider').value, key: $('byok-key').value }) }))
  const body = await res.json()
  $('byok-status').textContent = res.ok ? 'Added ' + body.data.label : 'Error: ' + body.error.message
  if (res.ok) $('byok-key').value = ''
  loadByok()
})
$('byok-test-new').addEventListener('click', () => runTest(api + '/byok/test', { provider: $('byok-provider').value, key: $('byok-key').value }))

// Speech: the audio bytes come back as they are made; transcription sends an upload (multipart, like OpenAI's clients).
let lastSpeech = null
$('speak-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  if (!key) return ($('audio-status').textContent = 'Connect first to get a key.')
  $('audio-status').textContent = 'Speaking…'
  const res = await fetch(api + '/audio/speech', authed({ method: 'POST', body: JSON.stringify({ model: $('speech-model').value, input: $('speech-text').value, response_format: 'wav' }) }))
  if (!res.ok) return ($('audio-status').textContent = 'Error: ' + (await res.json()).error.message)
  lastSpeech = await res.blob()
  $('speech-audio').src = URL.createObjectURL(lastSpeech)
  $('audio-status').textContent = 'Spoke ' + lastSpeech.size + ' bytes of ' + res.headers.get('content-type')
  refreshMe()
})
async function transcribe(file) {
  if (!key) return ($('audio-status').textContent = 'Connect first to get a key.')
  if (!file) return ($('audio-status').textContent = 'Choose a file (or speak something first).')
  const form = new FormData()
  form.append('model', $('transcription-model').value)
  form.append('file', file)
  $('audio-status').textContent = 'Transcribing…'
  const res = await fetch(api + '/audio/transcriptions', { method: 'POST', headers: { authorization: 'Bearer ' + key }, body: form })
  const body = await res.json()
  $('audio-status').textContent = res.ok ? 'Transcript: ' + body.text + ' (cost ' + body.usage.cost_eur + ' EUR)' : 'Error: ' + body.error.message
  refreshMe()
}
$('transcribe-form').addEventListener('submit', (event) => {
  event.preventDefault()
  transcribe($('audio-file').files[0])
})
$('transcribe-last').addEventListener('click', () => transcribe(lastSpeech && new File([lastSpeech], 'speech.wav', { type: 'audio/wav' })))

${dashboardScript}
await finishConnect()
await Promise.all([refreshMe(), loadModels()])
await loadByok()
await loadUsage()
document.body.dataset.ready = 'true'
</script>
</body>
</html>`
}
