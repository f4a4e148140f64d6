import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { chromium, type Browser } from 'playwright-core'

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
