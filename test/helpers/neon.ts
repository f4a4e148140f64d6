// Neon's serverless driver (@neondatabase/serverless) pointed at the local PostgreSQL through the WebSocket bridge
// (./websocket-bridge.ts), as it reaches a Neon database through Neon's WebSocket proxy (docs/edge.md#postgresql-over-neons-serverless-driver).
import { neonConfig, Pool } from '@neondatabase/serverless'
import ws from 'ws'
import type { WebSocketBridge } from './websocket-bridge'

/** A Neon Pool of at most `max` connections to `url`, each a WebSocket through `bridge()`, closed after 1 s idle. */
export function neonPoolThrough(url: string, bridge: () => WebSocketBridge, max: number): Pool {
  // Node 20 has no global WebSocket; the bridge is plain ws:// with no TLS; the local server trusts the user without a
  // password, which the driver's pipelined connect (it sends the password before the server asks) does not expect.
  // The settings are the driver's global ones: every Neon Pool in this process goes through the bridge.
  neonConfig.webSocketConstructor = ws as never
  neonConfig.wsProxy = (host, port) => bridge().wsProxy(host, port)
  neonConfig.useSecureWebSocket = false
  neonConfig.pipelineConnect = false
  return new Pool({ connectionString: url, max, idleTimeoutMillis: 1000 })
}
