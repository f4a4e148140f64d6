import type { Readable } from 'node:stream'

/** How collecting a stream fails: beyond `limit` bytes (`tooLarge`), or on an error or a close before its end (`failed`). */
export interface CollectOptions {
  limit?: number
  tooLarge?: () => Error
  /** The error, or the stream's own `errored` (null when it was closed without one). */
  failed: (cause: unknown) => Error
}

/**
 * Collects a Node stream's bytes from 'data' events until 'end' (cheaper than an async iterator or a web stream
 * around it). Beyond `limit` it stops collecting and lets the rest be read and discarded, as Node does for a body a
 * handler leaves unread. Undefined for an empty stream.
 */
export function collectBytes(stream: Readable, options: CollectOptions): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const cleanup = () => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
      stream.off('close', onClose)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (options.limit !== undefined && size > options.limit) {
        cleanup()
        stream.resume()
        return reject(options.tooLarge?.() ?? new RangeError(`more than ${options.limit} bytes`))
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resolve(size === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
    }
    const onError = (error: Error) => {
      cleanup()
      reject(options.failed(error))
    }
    // Closed without 'end' or 'error': cut short.
    const onClose = () => {
      cleanup()
      reject(options.failed(stream.errored))
    }
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
    stream.on('close', onClose)
  })
}
