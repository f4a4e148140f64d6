import { describe, expect, it } from 'vitest'
import { createCatalogue } from '../../src/catalogue/catalogue'
import { silentLogger } from '../../src/logger'
import { openai } from '../../src/providers/openai'
import { plan } from '../../src/routing/planner'
import { healthOf, labels, providerOf, usd } from '../helpers/planner'

// A provider's data policy is resolved once per offer, when the catalogue is built (docs/routing.md "Data
// policies"): planning reads the offer's facts, never the provider's policy again.

describe('data policy facts of an offer', () => {
  const catalogueOf = (providers: ReturnType<typeof providerOf>[]) =>
    createCatalogue({ providers, overrides: {}, logger: silentLogger, basePath: '/api/v1', refreshSeconds: 60, timeoutMs: 1_000, now: () => 0 })

  it('are the provider’s own policy, else its preset’s, else unknown', () => {
    const own = providerOf('own', { dataPolicy: { training: false, retains_prompts: false }, models: [{ id: 'acme/chat', pricing: usd('0.000001') }] })
    const preset = openai({ apiKey: 'sk-x', models: [{ id: 'acme/chat', pricing: usd('0.000002') }] })
    const silent = providerOf('silent', { dataPolicy: { training: 'maybe' }, models: [{ id: 'acme/chat', pricing: usd('0.000003') }] })
    const entry = catalogueOf([own, preset, silent]).get('acme/chat')!
    expect(entry.offers.map((o) => [o.provider.slug, o.dataPolicy])).toEqual([
      ['own', { training: false, retainsPrompts: false }],
      ['openai', { training: false, retainsPrompts: true }],
      ['silent', { training: undefined, retainsPrompts: undefined }],
    ])
  })

  it('are read once, when the catalogue is built, however many requests ask for zdr', () => {
    let reads = 0
    const provider = providerOf('zdr', { models: [{ id: 'acme/chat', pricing: usd('0.000001') }] })
    Object.defineProperty(provider, 'dataPolicy', {
      get: () => {
        reads++
        return { training: false, retains_prompts: false }
      },
    })
    const entry = catalogueOf([provider]).get('acme/chat')!
    const afterBuild = reads
    expect(afterBuild).toBeGreaterThan(0)
    for (let i = 0; i < 5; i++) {
      const attempts = plan({
        request: { capability: 'chat', model: 'acme/chat', provider: { zdr: true, data_collection: 'deny' } },
        entries: [entry],
        catalogue: () => [entry],
        health: healthOf(),
      })
      expect(labels(attempts)).toEqual(['zdr'])
    }
    expect(reads).toBe(afterBuild)
  })
})
