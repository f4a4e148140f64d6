import type { ProviderModel } from '../../contracts'

/*
 * Embedding models (`/embeddings`, docs/embeddings.md) per provider, with their list prices in USD per input token
 * (the completion price is 0: an embedding has no output tokens). Checked on 2026-11-26; each entry's `source` names
 * the page relied on and says what is derived or unsettled. Override prices in `createGateway({ modelOverrides })`.
 *
 * `embedding.dimensions` is the length of the vectors a model returns by default; `shortenable` models return fewer
 * when a request asks (`dimensions`: OpenAI's text-embedding-3 models, Gemini's `outputDimensionality`).
 */

const CHECKED = '2026-11-26'
const perMillion = (usd: number) => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const price = (input: number): ProviderModel['pricing'] => ({ prompt: perMillion(input), completion: '0', currency: 'USD' })
const source = (url: string, note: string): ProviderModel['source'] => ({ url, checked: CHECKED, note })
const epoch = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000
// What every embedding model is: text in, vectors out (OpenRouter's `embeddings` output modality), on /embeddings.
const EMBEDDING = {
  inputModalities: ['text'],
  outputModalities: ['embeddings'],
  endpoints: ['/embeddings'],
  supportedParameters: ['dimensions', 'encoding_format', 'user'],
} satisfies Partial<ProviderModel>
const LITELLM = 'https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json'

/** Embedding models per provider slug (`openai`, `google`, `mistral`, `together`), merged into each provider's known models. */
export const embeddingModels: Record<'openai' | 'google' | 'mistral' | 'together', ProviderModel[]> = {
  openai: [
    {
      id: 'openai/text-embedding-3-small',
      name: 'OpenAI: Text Embedding 3 Small',
      description: 'OpenAI’s small third-generation embedding model: 1536 dimensions, shortenable with `dimensions`.',
      contextLength: 8_191,
      pricing: price(0.02),
      ...EMBEDDING,
      embedding: { dimensions: 1536, shortenable: true },
      created: epoch('2024-01-25'),
      releaseDate: '2024-01-25',
      detailsUrl: 'https://platform.openai.com/docs/models/text-embedding-3-small',
      source: source(
        LITELLM,
        '$0.02 per M input tokens, 8,191-token input (LiteLLM’s table and OpenAI’s embeddings guide, “62,500 pages per dollar”); 1536 dimensions, shortenable.',
      ),
    },
    {
      id: 'openai/text-embedding-3-large',
      name: 'OpenAI: Text Embedding 3 Large',
      description: 'OpenAI’s large third-generation embedding model: 3072 dimensions, shortenable with `dimensions`.',
      contextLength: 8_191,
      pricing: price(0.13),
      ...EMBEDDING,
      embedding: { dimensions: 3072, shortenable: true },
      created: epoch('2024-01-25'),
      releaseDate: '2024-01-25',
      detailsUrl: 'https://platform.openai.com/docs/models/text-embedding-3-large',
      source: source(
        LITELLM,
        '$0.13 per M input tokens, 8,191-token input (LiteLLM’s table and OpenAI’s embeddings guide, “9,615 pages per dollar”); 3072 dimensions, shortenable.',
      ),
    },
    {
      id: 'openai/text-embedding-ada-002',
      name: 'OpenAI: Text Embedding Ada 002',
      description: 'OpenAI’s second-generation embedding model: 1536 dimensions, not shortenable.',
      contextLength: 8_191,
      pricing: price(0.1),
      ...EMBEDDING,
      supportedParameters: ['encoding_format', 'user'],
      embedding: { dimensions: 1536 },
      created: epoch('2022-12-15'),
      releaseDate: '2022-12-15',
      detailsUrl: 'https://platform.openai.com/docs/models/text-embedding-ada-002',
      source: source(
        LITELLM,
        '$0.10 per M input tokens (LiteLLM’s table; OpenAI’s embeddings guide, “12,500 pages per dollar”); OpenAI says it is not deprecating it. 1536 dimensions; `dimensions` is refused by OpenAI for it.',
      ),
    },
  ],
  google: [
    {
      id: 'google/gemini-embedding-001',
      upstreamId: 'gemini-embedding-001',
      name: 'Google: Gemini Embedding 001',
      description: 'Google’s generally available text embedding model: 3072 dimensions, shortenable (outputDimensionality; 1536 and 768 recommended).',
      contextLength: 2_048,
      pricing: price(0.15),
      ...EMBEDDING,
      embedding: { dimensions: 3072, shortenable: true },
      created: epoch('2025-07-14'),
      releaseDate: '2025-07-14',
      detailsUrl: 'https://ai.google.dev/gemini-api/docs/embeddings',
      source: source(
        'https://embeddingcost.com/google',
        '$0.15 per M input tokens (Standard; batch $0.075), 2,048-token input, 3072 dimensions with Matryoshka shortening (embeddingcost.com, verified April 2026; tokenmix.ai and zilliz.com give the same price). Release date per the 2026-11-26 audit.',
      ),
    },
  ],
  mistral: [
    {
      id: 'mistralai/mistral-embed',
      upstreamId: 'mistral-embed',
      name: 'Mistral: Mistral Embed',
      description: 'Mistral’s general-purpose text embedding model: 1024 dimensions, not shortenable.',
      contextLength: 8_192,
      pricing: price(0.1),
      ...EMBEDDING,
      supportedParameters: ['encoding_format'],
      embedding: { dimensions: 1024 },
      created: epoch('2023-12-11'),
      detailsUrl: 'https://docs.mistral.ai/capabilities/embeddings/',
      source: source(
        LITELLM,
        '$0.10 per M input tokens, 8,192-token input (LiteLLM’s mistral/mistral-embed: input_cost_per_token 1e-7); 1024 dimensions. fairlane.systems (May 2026) gives EUR 0.10 on La Plateforme: the USD list price is kept.',
      ),
    },
  ],
  together: [
    {
      id: 'baai/bge-large-en-v1.5',
      upstreamId: 'BAAI/bge-large-en-v1.5',
      name: 'BAAI: bge-large-en-v1.5',
      description: 'BAAI’s open-weight English embedding model (335M parameters): 1024 dimensions, 512-token input.',
      contextLength: 512,
      pricing: price(0.016),
      ...EMBEDDING,
      supportedParameters: ['encoding_format'],
      embedding: { dimensions: 1024 },
      huggingFaceId: 'BAAI/bge-large-en-v1.5',
      created: epoch('2023-09-12'),
      source: source(
        LITELLM,
        'Derived: LiteLLM prices Together’s embedding models by size, together-ai-embedding-151m-to-350m at $0.016 per M input tokens, and this model has 335M parameters. Unsettled: Together’s own current price list was not found.',
      ),
    },
  ],
}
