const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code,pre{background:#f3f3f5;border-radius:4px;padding:.1rem .3rem}pre{padding:.8rem;overflow:auto;white-space:pre-wrap;word-break:break-all}
button{font:inherit;padding:.5rem 1rem;border-radius:8px;border:1px solid #0a58ca;background:#0a58ca;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #f90;outline-offset:2px}`

/** A page of the host app in the playground's plain style: its title, body, module script and any extra CSS. */
export const page = (title: string, body: string, script = '', style = '') => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><style>${STYLE}${style}</style></head>
<body>
${body}
${script ? `<script type="module">${script}</script>` : ''}
</body>
</html>`

/** The demo sign-in page of the host app: one button signs in as the demo user. */
export function signInPage(returnTo: string, email: string): string {
  const escaped = returnTo.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  return page(
    'Sign in',
    `<main><h1>Sign in</h1>
<p>This is the host app’s sign-in page. In the playground, one click signs you in as <strong>${email}</strong>.</p>
<form method="post" action="/sign-in"><input type="hidden" name="return_to" value="${escaped}">
<button type="submit" id="sign-in">Sign in as ${email}</button></form></main>`,
  )
}

const base64url = `const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')`

/** An example third-party app that asks for a key with PKCE (S256). */
export function exampleAppPage(basePath: string): string {
  return page(
    'Example app',
    `<main><h1>Example app</h1>
<p>This page stands for an app that wants an API key for its user. It creates a fresh PKCE verifier, keeps it in this tab, and sends you to the gateway to approve.</p>
<button type="button" id="start">Connect with model-gateway</button>
<p id="status" role="status"></p></main>`,
    `${base64url}
document.getElementById('start').addEventListener('click', async () => {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)))
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
  const state = base64url(crypto.getRandomValues(new Uint8Array(12)))
  sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }))
  const params = new URLSearchParams({ callback_url: location.origin + '/example-app/callback', code_challenge: challenge, code_challenge_method: 'S256', state })
  document.getElementById('status').textContent = 'Redirecting to the gateway…'
  location.href = '${basePath}/auth?' + params
})`,
  )
}

/** The example app's callback: exchanges the code for a key and shows the key working. */
export function exampleCallbackPage(basePath: string): string {
  return page(
    'Example app: connected?',
    `<main><h1>Example app</h1>
<p id="status" role="status">Exchanging the code…</p>
<p>New API key: <code id="key">–</code></p>
<p>GET ${basePath}/me with it:</p><pre id="me">–</pre>
<p><a href="/example-app">Start again</a></p></main>`,
    `
const status = document.getElementById('status')
const query = new URLSearchParams(location.search)
const saved = JSON.parse(sessionStorage.getItem('pkce') || 'null')
sessionStorage.removeItem('pkce')
if (query.get('error')) status.textContent = 'Not connected: ' + query.get('error')
else if (!saved || saved.state !== query.get('state')) status.textContent = 'Not connected: the state does not match this tab'
else {
  const res = await fetch('${basePath}/auth/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: query.get('code'), code_verifier: saved.verifier }) })
  const body = await res.json()
  if (!res.ok) status.textContent = 'Exchange failed: ' + body.error.message
  else {
    document.getElementById('key').textContent = body.key
    const me = await fetch('${basePath}/me', { headers: { authorization: 'Bearer ' + body.key } })
    document.getElementById('me').textContent = JSON.stringify(await me.json(), null, 2)
    status.textContent = 'Connected: the key works.'
  }
}`,
  )
}
