// The secret's minimum length, and what to say of a shorter one: checked by the module when it knows the secret at
// build time (adapters/nuxt.ts) and by the server when it starts (secrets.ts).

/** The gateway's minimum secret length (src/gateway.ts refuses a shorter one). */
export const MIN_SECRET_LENGTH = 32

/** What to say of a secret too short: where it was set, its length, and what to start again once it is fixed. */
export const secretTooShort = (where: string, length: number, restart: string): string =>
  `${where} has ${length} characters: the secret must have at least ${MIN_SECRET_LENGTH}. Set it to a random string of ${MIN_SECRET_LENGTH} characters or more (\`openssl rand -base64 32\` prints one), then ${restart} again.`
