// A node:inspector session on this process, for the bench's CPU and allocation profiles.
import { Session } from 'node:inspector'

/** Sends one inspector command on `session` and resolves with its result. */
export type InspectorPost = (method: string, params?: object) => Promise<any>

/** Opens an inspector session on this process, runs `use` with it, and closes it. */
export async function withInspector<T>(use: (post: InspectorPost) => Promise<T>): Promise<T> {
  const session = new Session()
  session.connect()
  const post: InspectorPost = (method, params = {}) =>
    new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
  try {
    return await use(post)
  } finally {
    session.disconnect()
  }
}
