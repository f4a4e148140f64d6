import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeSettlement, encodeSettlement, type KeptSettlement, openSettlementJournal } from '../../src/billing/settlement-journal'
import { createSettlementRetries } from '../../src/billing/settlement-retries'
import { silentLogger } from '../../src/logger'

// The journal and retry queue of settlements the storage did not take (docs/operations.md#settlements-that-fail); the
// HTTP tests against real Redis are test/integration/settlement-retries-*.test.ts.

const kept = (id: string, units = 1_234_567_890_123_456_789n): KeptSettlement => ({
  id,
  kind: 'charge',
  org_id: 'org-1',
  since: 1_700_000_000_000,
  input: {
    id,
    budgets: [
      { usedKey: 'gw:credits:org-1:used', holdsKey: 'gw:holds:org:org-1', limit: { key: 'gw:credits:org-1:granted' } },
      {
        usedKey: 'gw:credits:key:h:used-daily',
        usedWindow: 1_700_000_000_000,
        alsoUsed: ['gw:credits:key:h:byok-daily'],
        holdsKey: 'gw:holds:key:h',
        limit: { units: 5n * 10n ** 12n },
        units: 7n,
      },
    ],
    charges: [units, 0n],
    counters: [{ key: 'gw:credits:key:h:used-daily', units, window: { start: 1_700_000_000_000, ttlMs: 86_400_000 } }],
    records: [{ key: `gw:generation-ids:org-1:${id}`, value: { key: 'gw:usage:org-1:x', created_at: '2026-01-01T00:00:00.000Z' } }],
    once: `gw:generation-ids:org-1:${id}`,
  },
})

describe('the settlement journal', () => {
  const dirs: string[] = []
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-journal-unit-'))
    dirs.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it('writes bigints as strings and reads every field back exactly', () => {
    const settlement = kept('h1')
    const line = JSON.stringify(encodeSettlement(settlement))
    expect(line).toContain('"1234567890123456789"')
    expect(decodeSettlement(JSON.parse(line))).toEqual(settlement)
    expect(() => decodeSettlement({ id: 'x' })).toThrow(TypeError)
  })

  it('gives back what was kept and not done, skips a line cut short by a kill, and rewrites the file with the pending alone', async () => {
    const path = join(tempDir(), 'settlements.jsonl')
    const pending = new Map<string, KeptSettlement>()
    const first = openSettlementJournal(path, pending, silentLogger)
    expect(first.pending).toEqual([])
    for (const id of ['a', 'b', 'c']) {
      pending.set(id, kept(id))
      await first.journal.keep(kept(id))
    }
    pending.delete('b')
    await first.journal.done('b')
    await first.journal.close()
    // A process killed in the middle of a line.
    appendFileSync(path, '{"op":"keep","settlement":{"id":"d","ki')

    const again = openSettlementJournal(path, new Map(), silentLogger)
    expect(again.pending.map((k) => k.id)).toEqual(['a', 'c'])
    expect(again.pending[1]).toEqual(kept('c'))
    expect(
      readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).settlement.id),
    ).toEqual(['a', 'c'])
    await again.journal.close()
  })

  it('is emptied once nothing is pending, and belongs to one gateway of the process at a time', async () => {
    const path = join(tempDir(), 'settlements.jsonl')
    const pending = new Map<string, KeptSettlement>()
    const { journal } = openSettlementJournal(path, pending, silentLogger)
    expect(() => openSettlementJournal(path, new Map(), silentLogger)).toThrow(/already the journal of another gateway/)
    pending.set('a', kept('a'))
    await journal.keep(kept('a'))
    expect(readFileSync(path, 'utf8')).not.toBe('')
    pending.delete('a')
    await journal.done('a')
    expect(readFileSync(path, 'utf8')).toBe('')
    await journal.close()
    const reopened = openSettlementJournal(path, new Map(), silentLogger)
    expect(reopened.pending).toEqual([])
    await reopened.journal.close()
  })

  it('refuses, at creation, a file it cannot write', () => {
    expect(() => openSettlementJournal(join(tempDir(), 'missing-folder', 'settlements.jsonl'), new Map(), silentLogger)).toThrow(
      /settlementRetries\.journal: cannot write/,
    )
  })

  it('says when a write failed, and is whole again at the next write that succeeds', async () => {
    const dir = tempDir()
    const path = join(dir, 'settlements.jsonl')
    const pending = new Map<string, KeptSettlement>()
    const errors: string[] = []
    const { journal } = openSettlementJournal(path, pending, { ...silentLogger, error: (message) => void errors.push(message) })
    pending.set('a', kept('a'))
    await journal.keep(kept('a'))
    // Its folder is gone: the rewrite that empties it fails.
    rmSync(dir, { recursive: true, force: true })
    pending.delete('a')
    await journal.done('a')
    expect(journal.failing).toBe(true)
    expect(errors[0]).toContain('marking a settlement done failed')
    // The folder is back: the next write rewrites the file whole.
    mkdirSync(dir)
    pending.set('b', kept('b'))
    await journal.keep(kept('b'))
    expect(journal.failing).toBe(false)
    expect(JSON.parse(readFileSync(path, 'utf8').trim()).settlement.id).toBe('b')
    await journal.close()
  })
})

describe('the retry queue of settlements', () => {
  it('tries a kept settlement again until it lands, with the same input each time', async () => {
    const inputs: unknown[] = []
    let fail = 2
    const retries = createSettlementRetries({
      settle: async (input) => {
        inputs.push(input)
        if (fail-- > 0) throw new Error('ECONNREFUSED')
      },
      chargesOnce: true,
      options: { maxPending: 10 },
      logger: silentLogger,
      now: Date.now,
    })
    const settlement = kept('h1')
    await retries.keep(settlement, new Error('ECONNREFUSED'))
    expect(retries.pending).toBe(1)
    expect(retries.status()).toEqual({ ok: true, pending: 1 })
    // 0.5 s, then 1 s after that: the third try lands.
    const started = Date.now()
    while (retries.pending) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(Date.now() - started).toBeGreaterThanOrEqual(1300)
    expect(inputs).toHaveLength(3)
    for (const input of inputs) expect(input).toBe(settlement.input)
    await retries.close(0)
  })

  it('tries a charge again only on an engine whose settlement is one step; a release on any', async () => {
    const local = createSettlementRetries({ settle: async () => {}, chargesOnce: false, options: { maxPending: 10 }, logger: silentLogger, now: Date.now })
    expect(local.retries('charge')).toBe(false)
    expect(local.retries('release')).toBe(true)
    await local.close(0)
    expect(local.retries('release')).toBe(false)
  })

  it('once closed, keeps nothing more: a settlement kept then is given up and logged at once', async () => {
    const errors: [string, any][] = []
    const retries = createSettlementRetries({
      settle: async () => {},
      chargesOnce: true,
      options: { maxPending: 10 },
      logger: { ...silentLogger, error: (message, fields) => void errors.push([message, fields]) },
      now: Date.now,
    })
    await retries.close(0)
    await retries.keep(kept('late'), new Error('timeout'))
    expect(retries.pending).toBe(0)
    expect(errors).toHaveLength(1)
    expect(errors[0][0]).toContain('charge this request by hand')
    expect(errors[0][1]).toMatchObject({ hold_id: 'late', org_id: 'org-1', charge_eur: '1234567.890123456789' })
  })
})
