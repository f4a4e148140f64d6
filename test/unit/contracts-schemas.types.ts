/**
 * Type checks that keep the upstream wire types of src/contracts/ (written as providers speak them) in step with the
 * HTTP schemas of src/schemas/ (docs/development.md#contracts): what a schema accepts and the gateway passes on
 * upstream must be assignable to the wire type, and every field the wire type names must be one the schema accepts.
 * A check that fails is a compile error here: `npx tsc --noEmit` reports it, and so does
 * test/unit/contracts-schemas.test.ts, which compiles this file, so a drift fails `npm test` too.
 */
import type * as v from 'valibot'
import type {
  SpeechFormat,
  TranscriptionFormat,
  UpstreamChatRequest,
  UpstreamEmbeddingRequest,
  UpstreamImageRequest,
  UpstreamSpeechRequest,
  UpstreamTranscriptionRequest,
} from '../../src/contracts'
import type { speechRequestSchema, transcriptionFormSchema, transcriptionRequestSchema } from '../../src/schemas/audio'
import type { ChatRequest } from '../../src/schemas/chat'
import type { EmbeddingsRequest } from '../../src/schemas/embeddings'
import type { ImagesRequest } from '../../src/schemas/images'

type Assert<T extends true> = T
type Extends<A, B> = [A] extends [B] ? true : false
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
// `Omit` over a type with an index signature (a valibot loose object) keeps only the index signature; this keeps the named fields.
type Without<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] }
// The fields a type names, without its index signature.
type Named<T> = keyof { [P in keyof T as string extends P ? never : number extends P ? never : P]: T[P] }
// Fields as the gateway passes them on: a null the schema accepts is left out.
type PassedOn<T, K extends keyof T> = { [P in K]: Exclude<T[P], null> }

// Chat: a request as routing passes it on (src/routing/attempts.ts), without `models` and `provider`, with the provider's model id.
type SentChat = Without<ChatRequest, 'model' | 'models' | 'provider'> & { model: string }
export type ChatRequestIsUpstream = Assert<Extends<SentChat, UpstreamChatRequest>>
export type ChatMessagesAreUpstream = Assert<Extends<SentChat['messages'][number], UpstreamChatRequest['messages'][number]>>
export type ChatFieldsAreAccepted = Assert<Same<Exclude<Named<UpstreamChatRequest>, Named<SentChat>>, never>>

// Embeddings: the input, dimensions and user passed on.
type EmbeddingFields = 'input' | 'dimensions' | 'user'
export type EmbeddingsRequestIsUpstream = Assert<Extends<PassedOn<EmbeddingsRequest, EmbeddingFields>, Pick<UpstreamEmbeddingRequest, EmbeddingFields>>>
export type EmbeddingsFieldsAreAccepted = Assert<Same<Exclude<Named<UpstreamEmbeddingRequest>, Named<EmbeddingsRequest>>, never>>

// Images: the fields passed on (`size` and `quality` but `auto`, which is left out; `response_format` is always base64).
type ImageFields = 'prompt' | 'n' | 'size' | 'quality' | 'background' | 'output_format' | 'output_compression' | 'moderation' | 'user'
export type ImagesRequestIsUpstream = Assert<Extends<PassedOn<ImagesRequest, ImageFields>, Pick<UpstreamImageRequest, ImageFields>>>
export type ImagesFieldsAreAccepted = Assert<Same<Exclude<Named<UpstreamImageRequest>, Named<ImagesRequest>>, never>>

// Speech: the fields passed on, and its formats.
type SpeechRequest = v.InferOutput<typeof speechRequestSchema>
type SpeechFields = 'input' | 'voice' | 'response_format' | 'speed' | 'instructions'
export type SpeechRequestIsUpstream = Assert<Extends<Pick<SpeechRequest, SpeechFields>, Pick<UpstreamSpeechRequest, SpeechFields>>>
export type SpeechFormatsAreUpstream = Assert<Same<SpeechRequest['response_format'], SpeechFormat>>

// Transcription: the fields of the JSON body and of the form passed on, and its formats.
type TranscriptionRequest = v.InferOutput<typeof transcriptionRequestSchema>
type TranscriptionForm = v.InferOutput<typeof transcriptionFormSchema>
type TranscriptionFields = 'language' | 'prompt' | 'temperature' | 'response_format' | 'timestamp_granularities'
type FormFields = 'language' | 'prompt' | 'temperature' | 'response_format'
export type TranscriptionRequestIsUpstream = Assert<
  Extends<Pick<TranscriptionRequest, TranscriptionFields>, Pick<UpstreamTranscriptionRequest, TranscriptionFields>>
>
export type TranscriptionFormIsUpstream = Assert<Extends<Pick<TranscriptionForm, FormFields>, Pick<UpstreamTranscriptionRequest, FormFields>>>
export type TranscriptionFormatsAreUpstream = Assert<Same<TranscriptionRequest['input_audio']['format'], TranscriptionFormat>>
