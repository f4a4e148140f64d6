import type { ConsentInfo } from '../options'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** The built-in consent page: plain, accessible HTML without external assets. */
export function renderConsentPage(info: ConsentInfo): string {
  const app = escapeHtml(info.appOrigin)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow ${app} to use your account?</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;color:#1d1d1f;background:#f5f5f7;margin:0;display:grid;place-items:center;min-height:100vh}
main{background:#fff;border-radius:12px;padding:2rem;max-width:28rem;box-shadow:0 2px 12px #0002}
h1{font-size:1.3rem;margin-top:0}.app{font-family:ui-monospace,monospace;background:#eef;padding:.1rem .3rem;border-radius:4px;word-break:break-all}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}button{font:inherit;padding:.6rem 1.2rem;border-radius:8px;border:1px solid #888;background:#fff;cursor:pointer}
button.approve{background:#0a58ca;border-color:#0a58ca;color:#fff}button:focus-visible{outline:3px solid #f90;outline-offset:2px}
</style>
</head>
<body>
<main>
<h1>Allow <span class="app">${app}</span> to use your account?</h1>
<p>You are signed in as <strong>${escapeHtml(info.userEmail)}</strong>. If you approve, <span class="app">${app}</span> receives a new API key that can make requests billed to your account. You can revoke it at any time.</p>
${info.limit ? `<p>The key can spend at most <strong>${escapeHtml(info.limit)} EUR</strong>.</p>\n` : ''}<p>You will be sent back to <span class="app">${escapeHtml(info.callbackUrl)}</span>.</p>
<form method="post" action="${escapeHtml(info.formAction)}">
<input type="hidden" name="request" value="${escapeHtml(info.request)}">
<div class="actions">
<button type="submit" name="decision" value="approve" class="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>
</main>
</body>
</html>`
}
