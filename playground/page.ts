/** The playground's landing page: plain HTML, no external assets. */
export function landingPage(basePath: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>model-gateway playground</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}code,pre{background:#f3f3f5;border-radius:4px;padding:.1rem .3rem}pre{padding:.8rem;overflow:auto}</style>
</head>
<body>
<h1>model-gateway playground</h1>
<p>An OpenRouter-style API is served under <code>${basePath}</code> on this server. Your demo API key was printed in the terminal on first start.</p>
<ul>
<li><a href="${basePath}/openapi.json">OpenAPI document</a> (every route, request and response)</li>
<li><a href="${basePath}/models">Models</a> and <a href="${basePath}/providers">providers</a></li>
</ul>
<p>Try it:</p>
<pre>curl -s ${basePath}/me -H "Authorization: Bearer $KEY"</pre>
</body>
</html>`
}
