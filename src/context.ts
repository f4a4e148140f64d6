import type { Storage } from 'unstorage'
import type { Catalogue } from './catalogue/catalogue'
import type { Logger } from './logger'
import type { HealthTracker } from './routing/health'
import type { ResolvedOptions } from './options'
import type { AccountsStore } from './stores/accounts'
import type { AtomicOps } from './stores/atomic'
import type { CreditsStore } from './stores/credits'
import type { Kv } from './stores/kv'
import type { UsageStore } from './stores/usage'
import type { CodesStore } from './stores/codes'
import type { ByokStore } from './stores/byok'
import type { HoldOps } from './stores/holds'
import type { InFlight } from './http/in-flight'

/** What every route handler receives: options, stores, clock and logger of one gateway. */
export interface GatewayContext {
  options: ResolvedOptions
  storage: Storage
  kv: Kv
  atomic: AtomicOps
  /** Holds on credits while requests run (docs/money.md). */
  holds: HoldOps
  accounts: AccountsStore
  credits: CreditsStore
  usage: UsageStore
  catalogue: Catalogue
  codes: CodesStore
  health: HealthTracker
  byok: ByokStore
  /** Key that signs consent requests of the PKCE browser flow. */
  consentKey: Uint8Array
  now: () => number
  logger: Logger
  /** When each key's use was last recorded (epoch ms), to throttle `last_used` writes. */
  lastKeyUse: Map<string, number>
  /** The requests and streams in flight, which close() drains (docs/operations.md). */
  inFlight: InFlight
}
