/**
 * The in-process client the AI SDK provider calls (docs/first-party.md#the-ai-sdk-provider): OpenAI-shaped methods
 * that take the gateway's own request bodies. Declared here, structurally, so the provider depends on its shape
 * only: the gateway's in-process client matches it, and so does any object with these two methods.
 */

/** What one call of the client takes besides its body: a signal that cancels it, headers for the gateway. */
export interface InProcessCallOptions {
  signal?: AbortSignal
  headers?: Record<string, string>
}

/**
 * The client's methods the provider uses. `chat.completions.create` takes the body of `POST /chat/completions`
 * (docs/chat.md) and resolves to the `chat.completion` object, or, with `stream: true`, to an async iterable of its
 * `chat.completion.chunk` objects; `embeddings.create` takes the body of `POST /embeddings` (docs/embeddings.md).
 * A call refused before it starts rejects with the gateway's error (`status`, `message`, `metadata`).
 */
export interface OpenAIShapedClient {
  chat: {
    completions: {
      // biome-ignore lint/suspicious/noExplicitAny: the client answers the gateway's JSON, read field by field here
      create(body: Record<string, unknown>, options?: InProcessCallOptions): Promise<any>
    }
  }
  embeddings: {
    // biome-ignore lint/suspicious/noExplicitAny: the client answers the gateway's JSON, read field by field here
    create(body: Record<string, unknown>, options?: InProcessCallOptions): Promise<any>
  }
}
