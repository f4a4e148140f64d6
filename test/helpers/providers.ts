import type { Provider } from '../../src/providers/types'

/** The provider without its native APIs (docs/native.md): a `/responses` or `/messages` request to it is served through the chat translation. */
export const withoutNative = (provider: Provider): Provider => ({ ...provider, native: undefined })
