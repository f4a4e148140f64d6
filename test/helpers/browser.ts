import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { startPlayground } from './playground'

/** Debian's Chromium; .ci/run installs it when missing, so in CI the browser tests always run. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** True when Chromium is there to run the browser tests. */
export const hasChromium = existsSync(chromiumPath)

/** Where browser tests save their screenshots. */
export const artifacts = resolve(import.meta.dirname, '../../test-results')

/** Launches headless Chromium with the flags this machine's closed network needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

/**
 * Inside a describe: a playground (npm start on a fresh data folder, `dataDir`) and Chromium, started before and
 * stopped after.
 */
export function playgroundInBrowser(): { browser: Browser; playground: Awaited<ReturnType<typeof startPlayground>>; dataDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'mg-browser-'))
  const state = { dataDir } as ReturnType<typeof playgroundInBrowser>
  beforeAll(async () => {
    state.playground = await startPlayground(dataDir)
    state.browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await state.browser?.close()
    await state.playground?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  return state
}
