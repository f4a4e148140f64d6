import type { CatalogueModel } from './catalogue'

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)

/** An RSS 2.0 feed of models, newest first (docs/catalogue.md#filters-pages-and-rss); `chatLink` gives each item's link when chat links are asked for. */
export function modelsRss(models: CatalogueModel[], options: { selfUrl: string; origin: string; chatLink?: (id: string) => string }): string {
  const sorted = [...models].sort((a, b) => b.created - a.created)
  const absolute = (link: string) => (/^https?:\/\//.test(link) ? link : `${options.origin}${link}`)
  const items = sorted.map((m) => {
    const link = absolute(options.chatLink ? options.chatLink(m.id) : m.links.details)
    return `    <item>
      <title>${escapeXml(m.name)}</title>
      <link>${escapeXml(link)}</link>
      <guid isPermaLink="false">${escapeXml(m.id)}</guid>
      <description>${escapeXml(m.description)}</description>
      <pubDate>${new Date(m.created * 1000).toUTCString()}</pubDate>
    </item>`
  })
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Models</title>
    <link>${escapeXml(options.selfUrl)}</link>
    <description>Models available through this gateway</description>
${items.join('\n')}
  </channel>
</rss>
`
}
