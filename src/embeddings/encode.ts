/**
 * A vector as OpenAI's `encoding_format: "base64"` sends it (docs/embeddings.md#base64): each value as a float32,
 * little-endian, the bytes in base64. What the openai SDK decodes back with a Float32Array.
 */
export function float32Base64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4)
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4)
  return bytes.toString('base64')
}
