import { expect } from 'vitest'

// The first-party contract every host passes (docs/first-party.md): the host's session (a cookie `host_user=<id>`,
// read by the host's own code) calls the gateway's routes without a key, billed to that user; a forged cross-site
// POST is refused; keys behave as before; and the host's own route `POST <hostUrl>/host/ask` ({ text }) answers
// through the in-process client of the request's user (the host's helper: clientFor, useGatewayClient).

/** Where the host serves: the gateway's API root (`…/api/v1`), the host's own routes' root, and a key of another user. */
export interface FirstPartyTarget {
  api: string
  host: string
  key: string
  /** The echo model's answer to `text` (the demo provider's: `Echo: <text>`). */
  echo: (text: string) => string
}

const json = { 'content-type': 'application/json' }

/** Runs the first-party contract against a running host. */
export async function runFirstPartyContract(target: FirstPartyTarget): Promise<void> {
  const hostUser = `host-${Math.random().toString(36).slice(2, 10)}`
  const cookie = { cookie: `host_user=${hostUser}` }
  const chat = (headers: Record<string, string>, text = 'hi from the session') =>
    fetch(`${target.api}/chat/completions`, {
      method: 'POST',
      headers: { ...json, ...headers },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: text }] }),
    })

  // A signed-in user chats without a key: created on first use (granted its credits), billed to its own org and user.
  const answered = await chat(cookie)
  expect(answered.status).toBe(200)
  const completion = await answered.json()
  expect(completion.choices[0].message.content).toBe(target.echo('hi from the session'))
  const me = await (await fetch(`${target.api}/me`, { headers: cookie })).json()
  expect(me.email).toBe(`${hostUser}@host.example`)
  expect(me.credits.total_credits).toBe('1')
  expect(Number(me.credits.total_usage)).toBeCloseTo(completion.usage.cost_eur, 12)
  const generation = await fetch(`${target.api}/generation?id=${completion.id}`, { headers: cookie })
  expect(generation.status).toBe(200)
  expect((await generation.json()).data.user_id).toBe(me.user_id)

  // A forged cross-site POST with the cookie is refused, and charges nothing.
  const forged = await chat({ ...cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
  expect(forged.status).toBe(403)
  expect((await forged.json()).error.metadata.reason).toBe('cross_site_session_request')
  const after = await (await fetch(`${target.api}/me`, { headers: cookie })).json()
  expect(after.credits.total_usage).toBe(me.credits.total_usage)

  // Keys behave as before: a key wins over the cookie; neither is a 401.
  const viaKey = await (await fetch(`${target.api}/me`, { headers: { ...cookie, authorization: `Bearer ${target.key}` } })).json()
  expect(viaKey.user_id).not.toBe(me.user_id)
  expect((await chat({})).status).toBe(401)

  // The host's own route, through the in-process client of the request's user: billed to the same user.
  const asked = await fetch(`${target.host}/host/ask`, { method: 'POST', headers: { ...json, ...cookie }, body: JSON.stringify({ text: 'in process' }) })
  expect(asked.status).toBe(200)
  const inProcess = await asked.json()
  expect(inProcess.choices[0].message.content).toBe(target.echo('in process'))
  expect(inProcess.id).toMatch(/^gen-/)
  const billed = await (await fetch(`${target.api}/me`, { headers: cookie })).json()
  expect(Number(billed.credits.total_usage)).toBeCloseTo(completion.usage.cost_eur + inProcess.usage.cost_eur, 12)
  const anonymous = await fetch(`${target.host}/host/ask`, { method: 'POST', headers: json, body: JSON.stringify({ text: 'x' }) })
  expect(anonymous.status).toBe(401)
}
