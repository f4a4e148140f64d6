import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, demo } from '../../src/index'
import { startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'

/** A GET through node:http with a Host header of our choosing (fetch would not let a test set it). */
function getWithHost(base: string, path: string, host: string): Promise<{ status: number; location?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers: { host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

const challenge = 'a'.repeat(43)
const authPath = `/api/v1/auth?callback_url=${encodeURIComponent('https://app.example/cb')}&code_challenge=${challenge}&state=s1`
const linksOf = (xml: string) => [...xml.matchAll(/<link>([^<]*)<\/link>/g)].map((m) => m[1].replace(/&amp;/g, '&'))

describe('publicUrl', () => {
  let pinned: TestGateway
  let absoluteSignIn: TestGateway
  let unpinned: TestGateway
  beforeAll(async () => {
    const auth = { resolveUser: () => null, signInUrl: '/login' }
    pinned = await startGateway({ publicUrl: 'https://gateway.example/', providers: [demo()], auth })
    absoluteSignIn = await startGateway({ publicUrl: 'https://gateway.example', auth: { ...auth, signInUrl: 'https://accounts.example/login' } })
    unpinned = await startGateway({ providers: [demo()], auth })
  })
  afterAll(async () => {
    await Promise.all([pinned.close(), absoluteSignIn.close(), unpinned.close()])
  })

  it('puts RSS links on the public URL whatever the Host header says', async () => {
    for (const query of ['use_rss=true', 'use_rss=true&use_rss_chat_links=true']) {
      const res = await getWithHost(pinned.url, `/api/v1/models?${query}`, 'evil.example')
      expect(res.status).toBe(200)
      expect(res.body).not.toContain('evil.example')
      const links = linksOf(res.body)
      expect(links[0]).toBe(`https://gateway.example/api/v1/models?${query}`)
      expect(links.length).toBeGreaterThan(1)
      for (const link of links) expect(link).toMatch(/^https:\/\/gateway\.example\//)
    }
    expect(linksOf((await getWithHost(pinned.url, '/api/v1/models?use_rss=true&use_rss_chat_links=true', 'evil.example')).body)).toContain(
      'https://gateway.example/?model=demo%2Fecho',
    )
  })

  it('puts the sign-in return address on the public URL whatever the Host header says', async () => {
    const relative = await getWithHost(pinned.url, authPath, 'evil.example')
    expect(relative.status).toBe(302)
    const location = new URL(relative.location!, 'https://gateway.example')
    expect(relative.location!.startsWith('/login?')).toBe(true)
    expect(location.searchParams.get('return_to')).toBe(`https://gateway.example${authPath}`)

    const absolute = await getWithHost(absoluteSignIn.url, authPath, 'evil.example')
    expect(absolute.status).toBe(302)
    const target = new URL(absolute.location!)
    expect(target.origin).toBe('https://accounts.example')
    expect(target.searchParams.get('return_to')).toBe(`https://gateway.example${authPath}`)
  })

  it('accepts the consent form posted from the public origin (behind a proxy), still refusing other origins', async () => {
    const post = (origin: string) =>
      pinned.request('/api/v1/auth/consent', {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'decision=approve&request=not-a-token',
      })
    const fromPublic = await post('https://gateway.example')
    expect(fromPublic.status).toBe(400) // past the origin check: the consent request itself is refused
    expect((await fromPublic.json()).error.param).toBe('request')
    expect((await post('https://evil.example')).status).toBe(403)
  })

  it('when unset, links follow the request (the Host header), as before', async () => {
    const res = await getWithHost(unpinned.url, authPath, 'other.example:8080')
    expect(new URL(res.location!, 'http://x').searchParams.get('return_to')).toBe(`http://other.example:8080${authPath}`)
    expect(linksOf((await getWithHost(unpinned.url, '/api/v1/models?use_rss=true', 'other.example:8080')).body)[0]).toBe(
      'http://other.example:8080/api/v1/models?use_rss=true',
    )
  })

  it('must be an absolute http(s) URL without path, query, fragment or user info', () => {
    for (const publicUrl of [
      'gateway.example',
      '/relative',
      'ftp://gateway.example',
      'https://gateway.example/app',
      'https://gateway.example/?a=1',
      'https://gateway.example/#top',
      'https://user:pass@gateway.example',
      '',
      'javascript:alert(1)',
      42,
    ]) {
      expect(() => createGateway({ secret: TEST_SECRET, logger: false, publicUrl: publicUrl as string }), String(publicUrl)).toThrow(TypeError)
    }
    const gateway = createGateway({ secret: TEST_SECRET, logger: false, publicUrl: 'HTTPS://Gateway.Example:8443' })
    expect(gateway.context.options.publicUrl).toBe('https://gateway.example:8443')
    void gateway.close()
  })
})
