/** Reads until `done` holds, every 25 ms, for at most `withinMs`; returns the last value read (the caller asserts on it). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, withinMs = 3000): Promise<T> {
  const until = performance.now() + withinMs
  let value = await read()
  while (!done(value) && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 25))
    value = await read()
  }
  return value
}
