import { describe, expect, it } from 'vitest'
import { safeReturnPath } from '../../playground/session'

const origin = 'http://127.0.0.1:3000'

describe('the playground sign-in return address', () => {
  it('keeps a path (and query) on this origin', () => {
    expect(safeReturnPath('/api/v1/auth?callback_url=https%3A%2F%2Fapp.example%2Fcb&state=1', origin)).toBe(
      '/api/v1/auth?callback_url=https%3A%2F%2Fapp.example%2Fcb&state=1',
    )
    expect(safeReturnPath(`${origin}/example-app?x=1`, origin)).toBe('/example-app?x=1')
    expect(safeReturnPath('/a/%2F%2Fb', origin)).toBe('/a/%2F%2Fb')
    expect(safeReturnPath(null, origin)).toBe('/')
  })

  it('falls back to / for another site, also one hidden in a path a browser reads as protocol-relative', () => {
    for (const value of [
      'https://evil.example/x',
      '//evil.example/x',
      `${origin}//evil.example/x`,
      `${origin}/\\evil.example/x`,
      '/\\evil.example/x',
      '\\\\evil.example/x',
      '\\/evil.example/x',
      '/%2F%2Fevil.example/x',
      '/%2fevil.example/x',
      '/%5Cevil.example/x',
      '/%5c%5cevil.example/x',
      '/%252F%252Fevil.example/x',
      `${origin}/%2F/evil.example/x`,
      '/\t/evil.example/x',
      'javascript:alert(1)',
    ]) {
      expect(safeReturnPath(value, origin), value).toBe('/')
    }
  })
})
