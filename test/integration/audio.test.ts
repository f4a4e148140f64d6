import OpenAI, { toFile } from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiAudioModels } from '../../src/providers/models/audio-models'
import { demo, openaiCompatible, type ProviderModel } from '../../src/index'
import { makeMp3, makeWav, wavSeconds } from '../fakes/audio'
import { fakeSpeechAudio } from '../fakes/openai-audio'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText, roundUnits, units } from '../helpers/sse'

const json = { 'content-type': 'application/json' }
// OpenAI's audio models without their retirement dates (2027-01-06, 2027-02-26), so the tests do not depend on the day they run.
const audioModels: ProviderModel[] = openaiAudioModels.map((m) => ({ ...m, expirationDate: undefined }))
const known = (id: string): ProviderModel => audioModels.find((m) => m.id === id)!
const speechModel = (id: string, upstreamId: string, extra: Partial<ProviderModel> = {}): ProviderModel => ({
  ...known('openai/tts-1'),
  id,
  upstreamId,
  ...extra,
})
const transcribeModel = (id: string, upstreamId: string): ProviderModel => ({ ...known('openai/whisper-1'), id, upstreamId })
const LIMIT = 48 * 1024

/** USD and EUR (at 0.86) of an amount given in 10^-12 USD units, as decimal strings. */
const money = (usd: bigint): [string, string] => [decimalText(usd), decimalText(roundUnits(usd * 86n, 2))]

/** Reads a response body chunk by chunk. */
async function readChunks(res: Response): Promise<Buffer[]> {
  const chunks: Buffer[] = []
  const reader = res.body!.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return chunks
    chunks.push(Buffer.from(value))
  }
}

describe('audio: POST /api/v1/audio/speech and /api/v1/audio/transcriptions', () => {
  let alpha: FakeOpenAI
  let beta: FakeOpenAI
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>
  const wav = makeWav(0.25) // 16 kHz mono 16-bit: 8044 bytes

  const speak = (body: Record<string, unknown>, headers: Record<string, string> = customer.auth) =>
    t.request('/api/v1/audio/speech', { method: 'POST', headers: { ...headers, ...json }, body: JSON.stringify(body) })
  const transcribeJson = (body: Record<string, unknown>, headers: Record<string, string> = customer.auth) =>
    t.request('/api/v1/audio/transcriptions', { method: 'POST', headers: { ...headers, ...json }, body: JSON.stringify(body) })
  const transcribeForm = (
    fields: Record<string, string>,
    file: { bytes: Uint8Array; name: string; type?: string },
    headers: Record<string, string> = customer.auth,
  ) => {
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type ?? '' }), file.name)
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    return t.request('/api/v1/audio/transcriptions', { method: 'POST', headers, body: form })
  }
  const credits = async (orgId = customer.user.org_id) => units((await t.gateway.admin.getCredits(orgId)).balance)
  const record = async (generationId: string | null, orgId = customer.user.org_id) =>
    (await t.gateway.context.usage.list(orgId)).find((r) => r.id === generationId)
  const expectError = async (res: Response, status: number, type: string, message: RegExp, param?: string) => {
    expect(res.status).toBe(status)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
    const body = await res.json()
    expect(body.error).toMatchObject({ code: status, type })
    expect(body.error.message).toMatch(message)
    expect(body.error.param).toBe(param)
  }
  const count = (fake: FakeOpenAI, path: string) => fake.requests.filter((r) => r.path === path).length

  beforeAll(async () => {
    alpha = await startFakeOpenAI({ apiKey: 'sk-alpha' })
    beta = await startFakeOpenAI({ apiKey: ['sk-beta', 'sk-customer-beta-9999'] })
    t = await startGateway({
      bodyLimits: { transcription: LIMIT },
      providers: [
        openaiCompatible({
          slug: 'alpha',
          name: 'Alpha',
          baseURL: alpha.url,
          apiKey: 'sk-alpha',
          models: [
            ...audioModels,
            { id: 'openai/gpt-4o-mini', pricing: { prompt: '0.00000015', completion: '0.0000006' } },
            speechModel('test/held-speech', 'hold'),
            speechModel('test/broken-speech', 'fail-midaudio'),
            speechModel('shared/speech', 'fail-500'),
            transcribeModel('shared/transcribe', 'fail-500'),
          ],
        }),
        openaiCompatible({
          slug: 'beta',
          name: 'Beta',
          baseURL: beta.url,
          apiKey: 'sk-beta',
          byokSupported: true,
          models: [speechModel('shared/speech', 'tts-1'), transcribeModel('shared/transcribe', 'whisper-1')],
        }),
        demo({ audio: true }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '10' })
  })
  afterAll(async () => {
    await t.close()
    await alpha.close()
    await beta.close()
  })

  describe('speech', () => {
    it('streams the upstream audio through unchanged, as audio/mpeg by default, and bills the characters exactly once', async () => {
      const before = await credits()
      const input = 'The quick brown fox jumps over the lazy dog. Ça va? 👋'
      const res = await speak({ model: 'openai/tts-1', input, voice: 'echo', speed: 1.25 })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('audio/mpeg')
      expect(res.headers.get('x-request-id')).toMatch(/^req_/)
      const generationId = res.headers.get('x-generation-id')
      expect(generationId).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
      const chunks = await readChunks(res)
      const upstream = alpha.requests.at(-1)!
      expect(upstream.path).toBe('/v1/audio/speech')
      expect(upstream.headers.authorization).toBe('Bearer sk-alpha')
      expect(upstream.body).toEqual({ model: 'tts-1', input, voice: 'echo', response_format: 'mp3', speed: 1.25 })
      expect(Buffer.concat(chunks).equals(upstream.sent!)).toBe(true)
      expect(upstream.sent!.length).toBeGreaterThan(3 * 1024)
      expect(chunks.length).toBeGreaterThan(1)

      // tts-1: $15 per 1M characters (code points: the emoji is one), 0.86 EUR per USD.
      const characters = [...input].length
      const [usd, eur] = money(BigInt(characters) * 15_000_000n)
      expect(decimalText(before - (await credits()))).toBe(eur)
      expect(await record(generationId)).toMatchObject({
        endpoint: 'speech',
        model: 'openai/tts-1',
        provider: 'alpha',
        status: 'success',
        stream: true,
        cost: usd,
        cost_eur: eur,
        billed_by: 'characters',
        characters,
        usage_estimated: false,
        prompt_tokens: 0,
        completion_tokens: 0,
        upstream_id: expect.stringMatching(/^req_fake_/),
      })
    })

    it('answers each response_format with its Content-Type, defaulting the voice to the model’s first', async () => {
      const types = { wav: 'audio/wav', pcm: 'audio/pcm', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac' }
      for (const [format, type] of Object.entries(types)) {
        const res = await speak({ model: 'openai/tts-1-hd', input: `Format ${format}`, response_format: format })
        expect(res.status, format).toBe(200)
        expect(res.headers.get('content-type')).toBe(type)
        const bytes = Buffer.from(await res.arrayBuffer())
        expect(alpha.requests.at(-1)!.body).toEqual({ model: 'tts-1-hd', input: `Format ${format}`, voice: 'alloy', response_format: format })
        expect(bytes.equals(fakeSpeechAudio({ input: `Format ${format}`, voice: 'alloy', response_format: format }))).toBe(true)
        if (format === 'wav') expect(wavSeconds(bytes)).toBeCloseTo(0.2, 3) // the fake's 20 ms per character
      }
    })

    it('pipes audio as it arrives: the first chunk reaches the client while the upstream is still holding the rest', async () => {
      const res = await speak({ model: 'test/held-speech', input: 'Hold on, streaming', voice: 'nova' })
      expect(res.status).toBe(200)
      const reader = res.body!.getReader()
      const first = await reader.read()
      const sent = alpha.requests.at(-1)!.sent!
      expect(Buffer.from(first.value!).equals(sent.subarray(0, 1024))).toBe(true)
      alpha.releaseAudio()
      const rest: Buffer[] = [Buffer.from(first.value!)]
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(Buffer.from(r.value))
      expect(Buffer.concat(rest).equals(sent)).toBe(true)
    })

    it('aborts the upstream when the client goes away, and bills the request once as cancelled', async () => {
      const before = await credits()
      const aborted = alpha.aborted
      const controller = new AbortController()
      const input = 'Nobody listens to this'
      const res = await t.request('/api/v1/audio/speech', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        body: JSON.stringify({ model: 'test/held-speech', input }),
        signal: controller.signal,
      })
      const generationId = res.headers.get('x-generation-id')
      await res.body!.getReader().read()
      controller.abort()
      await expect.poll(() => alpha.aborted, { timeout: 5000 }).toBe(aborted + 1)
      alpha.releaseAudio()
      await expect.poll(async () => (await record(generationId))?.status, { timeout: 5000 }).toBe('cancelled')
      expect(decimalText(before - (await credits()))).toBe(money(BigInt(input.length) * 15_000_000n)[1])
    })

    it('cuts the response short when the upstream fails after audio began, billed once as an error', async () => {
      const res = await speak({ model: 'test/broken-speech', input: 'This will break', voice: 'alloy' })
      expect(res.status).toBe(200)
      const generationId = res.headers.get('x-generation-id')
      await expect(res.arrayBuffer()).rejects.toThrow()
      await expect.poll(async () => (await record(generationId))?.status, { timeout: 5000 }).toBe('error')
    })

    it('bills gpt-4o-mini-tts by the tokens the upstream reports in its SSE events, still answering raw audio', async () => {
      const before = await credits()
      const input = 'Speak warmly, please.'
      const res = await speak({ model: 'openai/gpt-4o-mini-tts', input, voice: 'marin', instructions: 'Warm and slow', response_format: 'wav' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('audio/wav')
      const bytes = Buffer.from(await res.arrayBuffer())
      const upstream = alpha.requests.at(-1)!
      expect(upstream.body).toEqual({
        model: 'gpt-4o-mini-tts',
        input,
        voice: 'marin',
        instructions: 'Warm and slow',
        response_format: 'wav',
        stream_format: 'sse',
      })
      expect(bytes.equals(upstream.sent!)).toBe(true)
      expect(wavSeconds(bytes)).toBeCloseTo(0.42, 3)
      // The fake reports ceil((input + instructions) / 4) text tokens and ceil(bytes / 100) audio tokens.
      const inputTokens = Math.ceil((input.length + 'Warm and slow'.length) / 4)
      const outputTokens = Math.ceil(bytes.length / 100)
      const [usd, eur] = money(BigInt(inputTokens) * 600_000n + BigInt(outputTokens) * 12_000_000n)
      expect(decimalText(before - (await credits()))).toBe(eur)
      expect(await record(res.headers.get('x-generation-id'))).toMatchObject({
        billed_by: 'tokens',
        prompt_tokens: inputTokens,
        completion_tokens: outputTokens,
        cost: usd,
        cost_eur: eur,
        usage_estimated: false,
      })
    })

    it('refuses an unknown voice, a model that does not serve speech, a missing or unknown model, naming the problem', async () => {
      const sent = count(alpha, '/v1/audio/speech')
      await expectError(
        await speak({ model: 'openai/tts-1', input: 'Hi', voice: 'darth' }),
        400,
        'invalid_request',
        /^voice: darth is not a voice of openai\/tts-1; use one of alloy, ash, coral/,
        'voice',
      )
      await expectError(
        await speak({ model: 'openai/tts-1', input: 'Hi', voice: 'ballad' }),
        400,
        'invalid_request',
        /voice: ballad is not a voice of openai\/tts-1/,
        'voice',
      )
      await expectError(
        await speak({ model: 'openai/gpt-4o-mini', input: 'Hi' }),
        400,
        'invalid_request',
        /^model: openai\/gpt-4o-mini does not serve \/audio\/speech \(it serves \/chat\/completions\)\. Models that do: .*openai\/tts-1/,
        'model',
      )
      await expectError(
        await speak({ model: 'openai/whisper-1', input: 'Hi' }),
        400,
        'invalid_request',
        /does not serve \/audio\/speech \(it serves \/audio\/transcriptions\)/,
        'model',
      )
      await expectError(await speak({ model: 'nobody/tts', input: 'Hi' }), 404, 'not_found', /Model nobody\/tts is not available/, 'model')
      await expectError(await speak({ input: 'Hi' }), 400, 'invalid_request', /^model: is required$/, 'model')
      await expectError(await speak({ model: 'openai/tts-1', input: '' }), 400, 'invalid_request', /^input: must not be empty$/, 'input')
      await expectError(
        await speak({ model: 'openai/tts-1', input: 'Hi', response_format: 'ogg' }),
        400,
        'invalid_request',
        /^response_format:/,
        'response_format',
      )
      expect(count(alpha, '/v1/audio/speech')).toBe(sent)
    })

    it('falls back to the next provider when the first answers 500', async () => {
      const [alphaBefore, betaBefore] = [count(alpha, '/v1/audio/speech'), count(beta, '/v1/audio/speech')]
      const res = await speak({ model: 'shared/speech', input: 'Second time lucky', voice: 'coral', response_format: 'flac' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('audio/flac')
      const bytes = Buffer.from(await res.arrayBuffer())
      expect(count(alpha, '/v1/audio/speech')).toBe(alphaBefore + 1)
      expect(count(beta, '/v1/audio/speech')).toBe(betaBefore + 1)
      expect(beta.requests.at(-1)!.body.model).toBe('tts-1')
      expect(bytes.equals(beta.requests.at(-1)!.sent!)).toBe(true)
      expect(await record(res.headers.get('x-generation-id'))).toMatchObject({ provider: 'beta', attempts: 2, status: 'success' })
    })
  })

  describe('transcription', () => {
    const b64 = wav.toString('base64')

    it('sends base64 JSON upstream as a real multipart upload with exactly those bytes, and bills the reported seconds', async () => {
      const before = await credits()
      const res = await transcribeJson({
        model: 'openai/whisper-1',
        input_audio: { data: b64, format: 'wav' },
        language: 'en',
        prompt: 'A tone.',
        temperature: 0.2,
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
      const generationId = res.headers.get('x-generation-id')
      expect(generationId).toMatch(/^gen-/)
      const upstream = alpha.requests.at(-1)!
      expect(upstream.path).toBe('/v1/audio/transcriptions')
      expect(upstream.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/)
      expect(upstream.headers.authorization).toBe('Bearer sk-alpha')
      expect(upstream.body.file.name).toBe('audio.wav')
      expect(upstream.body.file.type).toBe('audio/wav')
      expect(upstream.body.file.bytes.equals(wav)).toBe(true)
      expect(upstream.body.fields).toEqual({ model: 'whisper-1', response_format: 'json', language: 'en', prompt: 'A tone.', temperature: '0.2' })

      const raw = await res.text()
      const body = JSON.parse(raw)
      expect(body.text).toBe(`Heard ${wav.length} bytes from audio.wav (audio/wav) with whisper-1 in en`)
      // whisper-1 reports { type: 'duration', seconds: 1 } (0.25 s rounded up): $0.006 a minute = $0.0001 a second.
      const [usd, eur] = money(1n * 100_000_000n)
      expect(body.usage).toMatchObject({
        input_tokens: 0,
        output_tokens: 0,
        total_tokens: 0,
        seconds: 1,
        cost_currency: 'USD',
        is_byok: false,
        billed_by: 'seconds',
      })
      expect(raw).toContain(`"cost":${usd},`)
      expect(raw).toContain(`"cost_eur":${eur},`)
      expect(decimalText(before - (await credits()))).toBe(eur)
      expect(await record(generationId)).toMatchObject({
        endpoint: 'transcription',
        model: 'openai/whisper-1',
        provider: 'alpha',
        stream: false,
        audio_seconds: 1,
        cost: usd,
        cost_eur: eur,
        billed_by: 'seconds',
      })
    })

    it('takes OpenAI’s multipart upload too, and answers verbose_json with language, duration and segments', async () => {
      const res = await transcribeForm(
        { model: 'openai/whisper-1', response_format: 'verbose_json', temperature: '0', 'timestamp_granularities[]': 'segment' },
        { bytes: wav, name: 'clip.wav', type: 'audio/wav' },
      )
      expect(res.status).toBe(200)
      const body = await res.json()
      const upstream = alpha.requests.at(-1)!
      expect(upstream.body.file.bytes.equals(wav)).toBe(true)
      expect(upstream.body.fields).toEqual({ model: 'whisper-1', response_format: 'verbose_json', temperature: '0', 'timestamp_granularities[]': 'segment' })
      expect(body).toMatchObject({
        text: `Heard ${wav.length} bytes from audio.wav (audio/wav) with whisper-1`,
        language: 'english',
        duration: 0.25,
        usage: { seconds: 1 },
      })
      expect(body.segments).toEqual([expect.objectContaining({ id: 0, start: 0, end: 0.25 })])
    })

    it('recognises an upload by its magic bytes when its name and type say nothing', async () => {
      const mp3 = makeMp3(40) // 40 frames of 1152 samples at 44.1 kHz ≈ 1.045 s
      const res = await transcribeForm({ model: 'openai/whisper-1' }, { bytes: mp3, name: 'blob' })
      expect(res.status).toBe(200)
      const upstream = alpha.requests.at(-1)!
      expect(upstream.body.file).toMatchObject({ name: 'audio.mp3', type: 'audio/mpeg' })
      expect(upstream.body.file.bytes.equals(mp3)).toBe(true)
    })

    it('bills gpt-4o-transcribe by its reported text, audio and output tokens', async () => {
      const before = await credits()
      const res = await transcribeJson({ model: 'openai/gpt-4o-transcribe', input_audio: { data: b64, format: 'wav' }, prompt: 'Tones and beeps' })
      expect(res.status).toBe(200)
      const body = await res.json()
      const text = Math.ceil('Tones and beeps'.length / 4)
      const audio = Math.ceil(wav.length / 1000)
      const output = body.text.split(' ').length
      const [usd, eur] = money(BigInt(text) * 2_500_000n + BigInt(audio) * 6_000_000n + BigInt(output) * 10_000_000n)
      expect(body.usage).toMatchObject({
        input_tokens: text + audio,
        output_tokens: output,
        total_tokens: text + audio + output,
        seconds: 0.25,
        billed_by: 'tokens',
      })
      expect(String(body.usage.cost)).toBe(usd)
      expect(String(body.usage.cost_eur)).toBe(eur)
      expect(decimalText(before - (await credits()))).toBe(eur)
    })

    it('refuses bad base64, a data URI, a format mismatch, a missing or speech model, naming the problem, before any upstream call', async () => {
      const sent = count(alpha, '/v1/audio/transcriptions')
      const bad = (data: string, format = 'wav') => transcribeJson({ model: 'openai/whisper-1', input_audio: { data, format } })
      await expectError(await bad('not base64!!'), 400, 'invalid_request', /^input_audio\.data: is not valid base64$/, 'input_audio.data')
      await expectError(await bad('QUJD=A=='), 400, 'invalid_request', /is not valid base64/, 'input_audio.data')
      await expectError(await bad(`data:audio/wav;base64,${b64}`), 400, 'invalid_request', /must be raw base64, not a data URI/, 'input_audio.data')
      await expectError(
        await bad(b64, 'mp3'),
        400,
        'invalid_request',
        /^input_audio\.data: the audio is not mp3 \(expected an ID3 tag or an MPEG frame sync\); it looks like wav$/,
        'input_audio.data',
      )
      await expectError(
        await bad(Buffer.from('hello, not audio at all').toString('base64')),
        400,
        'invalid_request',
        /the audio is not wav \(expected a RIFF\/WAVE header\); its format is not recognised/,
        'input_audio.data',
      )
      await expectError(
        await transcribeForm({ model: 'openai/whisper-1' }, { bytes: wav, name: 'clip.mp3', type: 'audio/mpeg' }),
        400,
        'invalid_request',
        /^file: the audio is not mp3 .*it looks like wav$/,
        'file',
      )
      await expectError(
        await transcribeForm({ model: 'openai/whisper-1' }, { bytes: Buffer.from('plain text'), name: 'notes.txt', type: 'text/plain' }),
        400,
        'invalid_request',
        /^file: not a supported audio format/,
        'file',
      )
      await expectError(await transcribeForm({}, { bytes: wav, name: 'clip.wav' }), 400, 'invalid_request', /^model: is required$/, 'model')
      const noFile = new FormData()
      noFile.append('model', 'openai/whisper-1')
      await expectError(
        await t.request('/api/v1/audio/transcriptions', { method: 'POST', headers: customer.auth, body: noFile }),
        400,
        'invalid_request',
        /^file: is required$/,
        'file',
      )
      noFile.append('file', 'just text')
      await expectError(
        await t.request('/api/v1/audio/transcriptions', { method: 'POST', headers: customer.auth, body: noFile }),
        400,
        'invalid_request',
        /^file: must be an uploaded file$/,
        'file',
      )
      await expectError(await transcribeJson({ input_audio: { data: b64, format: 'wav' } }), 400, 'invalid_request', /^model: is required$/, 'model')
      await expectError(
        await transcribeJson({ model: 'nobody/whisper', input_audio: { data: b64, format: 'wav' } }),
        404,
        'not_found',
        /Model nobody\/whisper is not available/,
        'model',
      )
      await expectError(
        await transcribeJson({ model: 'openai/tts-1', input_audio: { data: b64, format: 'wav' } }),
        400,
        'invalid_request',
        /model: openai\/tts-1 does not serve \/audio\/transcriptions/,
        'model',
      )
      await expectError(
        await transcribeJson({ model: 'openai/whisper-1', input_audio: { data: b64, format: 'aiff' } }),
        400,
        'invalid_request',
        /^input_audio\.format:/,
        'input_audio.format',
      )
      const malformed = await t.request('/api/v1/audio/transcriptions', {
        method: 'POST',
        headers: { ...customer.auth, 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper',
      })
      await expectError(malformed, 400, 'invalid_request', /^body: malformed multipart\/form-data \(the last part is not closed by the boundary\)$/)
      await expectError(
        await t.request('/api/v1/audio/transcriptions', { method: 'POST', headers: { ...customer.auth, 'content-type': 'text/plain' }, body: 'hi' }),
        415,
        'unsupported_media_type',
        /application\/json or multipart\/form-data/,
      )
      expect(count(alpha, '/v1/audio/transcriptions')).toBe(sent)
    })

    it('refuses a clip over the transcription body limit with 413, as JSON and as an upload', async () => {
      const sent = count(alpha, '/v1/audio/transcriptions')
      const big = makeWav(2) // 64 KiB > 48 KiB
      await expectError(
        await transcribeJson({ model: 'openai/whisper-1', input_audio: { data: big.toString('base64'), format: 'wav' } }),
        413,
        'payload_too_large',
        new RegExp(`larger than ${LIMIT} bytes`),
      )
      await expectError(
        await transcribeForm({ model: 'openai/whisper-1' }, { bytes: big, name: 'big.wav', type: 'audio/wav' }),
        413,
        'payload_too_large',
        new RegExp(`larger than ${LIMIT} bytes`),
      )
      expect(count(alpha, '/v1/audio/transcriptions')).toBe(sent)
    })

    it('passes an upstream refusal on as a 400 (gpt-4o-transcribe has no verbose_json), without charging', async () => {
      const before = await credits()
      const res = await transcribeJson({ model: 'openai/gpt-4o-transcribe', input_audio: { data: b64, format: 'wav' }, response_format: 'verbose_json' })
      await expectError(
        res,
        400,
        'invalid_request',
        /Alpha rejected the request: response_format 'verbose_json' is not compatible with model 'gpt-4o-transcribe'/,
      )
      expect(await credits()).toBe(before)
    })

    it('falls back to the next provider when the first answers 500', async () => {
      const [alphaBefore, betaBefore] = [count(alpha, '/v1/audio/transcriptions'), count(beta, '/v1/audio/transcriptions')]
      const res = await transcribeJson({ model: 'shared/transcribe', input_audio: { data: b64, format: 'wav' } })
      expect(res.status).toBe(200)
      const body = await res.json()
      expect(body.text).toBe(`Heard ${wav.length} bytes from audio.wav (audio/wav) with whisper-1`)
      expect(count(alpha, '/v1/audio/transcriptions')).toBe(alphaBefore + 1)
      expect(count(beta, '/v1/audio/transcriptions')).toBe(betaBefore + 1)
      expect(beta.requests.at(-1)!.body.file.bytes.equals(wav)).toBe(true)
      expect(await record(res.headers.get('x-generation-id'))).toMatchObject({ provider: 'beta', attempts: 2, status: 'success' })
    })
  })

  it('refuses both endpoints with 402 when the balance is not positive, sending nothing upstream', async () => {
    const broke = await createCustomer(t.gateway)
    const sent = alpha.requests.length
    await expectError(await speak({ model: 'openai/tts-1', input: 'Hi', voice: 'alloy' }, broke.auth), 402, 'insufficient_credits', /Insufficient credits/)
    await expectError(
      await transcribeJson({ model: 'openai/whisper-1', input_audio: { data: wav.toString('base64'), format: 'wav' } }, broke.auth),
      402,
      'insufficient_credits',
      /Insufficient credits/,
    )
    await expectError(
      await transcribeForm({ model: 'openai/whisper-1' }, { bytes: wav, name: 'clip.wav' }, broke.auth),
      402,
      'insufficient_credits',
      /Insufficient credits/,
    )
    expect(alpha.requests.length).toBe(sent)
  })

  it('serves with a customer’s own key (BYOK) first, charging no upstream cost to credits', async () => {
    const own = await createCustomer(t.gateway, { credits: '1' })
    const created = await t.request('/api/v1/byok', {
      method: 'POST',
      headers: { ...own.auth, ...json },
      body: JSON.stringify({ key: 'sk-customer-beta-9999', provider: 'beta' }),
    })
    expect(created.status).toBe(201)
    const before = await credits(own.user.org_id)
    const res = await transcribeJson({ model: 'shared/transcribe', input_audio: { data: wav.toString('base64'), format: 'wav' } }, own.auth)
    expect(res.status).toBe(200)
    const raw = await res.text()
    expect(beta.requests.at(-1)!.headers.authorization).toBe('Bearer sk-customer-beta-9999')
    expect(JSON.parse(raw).usage).toMatchObject({ is_byok: true, cost: 0, cost_eur: 0, seconds: 1 })
    expect(raw).toContain('"cost_details":{"upstream_inference_cost":0.0001}')
    expect(await credits(own.user.org_id)).toBe(before)
    expect(await record(res.headers.get('x-generation-id'), own.user.org_id)).toMatchObject({
      provider: 'beta',
      is_byok: true,
      cost_eur: '0',
      upstream_inference_cost: '0.0001',
      byok_counted: true,
      byok_free: true,
    })

    const speech = await speak({ model: 'shared/speech', input: 'My own key', voice: 'alloy' }, own.auth)
    expect(speech.status).toBe(200)
    await speech.arrayBuffer()
    expect(beta.requests.at(-1)!.headers.authorization).toBe('Bearer sk-customer-beta-9999')
    expect(await credits(own.user.org_id)).toBe(before)
  })

  it('works with the official openai client: audio.speech.create and audio.transcriptions.create', async () => {
    const client = new OpenAI({ apiKey: customer.key, baseURL: `${t.url}/api/v1`, maxRetries: 0 })
    const speech = await client.audio.speech.create({ model: 'openai/tts-1', input: 'Hello from the SDK', voice: 'fable', response_format: 'wav' })
    expect(speech.headers.get('content-type')).toBe('audio/wav')
    const audio = Buffer.from(await speech.arrayBuffer())
    expect(audio.equals(alpha.requests.at(-1)!.sent!)).toBe(true)
    expect(alpha.requests.at(-1)!.body).toEqual({ model: 'tts-1', input: 'Hello from the SDK', voice: 'fable', response_format: 'wav' })

    // Round trip: the speech the gateway answered goes back in as a file.
    const transcription = await client.audio.transcriptions.create({
      model: 'openai/whisper-1',
      file: await toFile(audio, 'speech.wav', { type: 'audio/wav' }),
      language: 'en',
    })
    expect(transcription.text).toBe(`Heard ${audio.length} bytes from audio.wav (audio/wav) with whisper-1 in en`)
    expect(alpha.requests.at(-1)!.body.file.bytes.equals(audio)).toBe(true)
    expect(transcription.usage as any).toMatchObject({ seconds: 1, input_tokens: 0, output_tokens: 0 })
    expect(typeof (transcription.usage as any).cost).toBe('number')

    const verbose = await client.audio.transcriptions.create({
      model: 'openai/whisper-1',
      file: await toFile(wav, 'clip.wav'),
      response_format: 'verbose_json',
    })
    expect(verbose).toMatchObject({ language: 'english', duration: 0.25 })
    expect(verbose.segments).toHaveLength(1)

    await expect(client.audio.speech.create({ model: 'openai/tts-1', input: 'x', voice: 'darth' })).rejects.toMatchObject({ status: 400 })
  })

  it('the offline demo: demo/speech makes a real WAV whose length follows the input, demo/transcribe measures it', async () => {
    const input = 'Ten chars!'
    const res = await speak({ model: 'demo/speech', input, voice: 'echo', response_format: 'wav' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('audio/wav')
    const bytes = Buffer.from(await res.arrayBuffer())
    expect(wavSeconds(bytes)).toBe(0.5) // 10 characters × 50 ms
    expect(bytes.readUInt32LE(24)).toBe(24_000)
    const pcm = Buffer.from(await (await speak({ model: 'demo/speech', input, response_format: 'pcm', speed: 2 })).arrayBuffer())
    expect(pcm.length).toBe(12_000) // 0.25 s of 16-bit samples at 24 kHz, no header

    const body = await (
      await transcribeJson({ model: 'demo/transcribe', input_audio: { data: bytes.toString('base64'), format: 'wav' }, response_format: 'verbose_json' })
    ).json()
    expect(body).toMatchObject({
      text: `Demo transcript: 0.5 seconds of wav audio, ${bytes.length} bytes.`,
      duration: 0.5,
      usage: { seconds: 0.5, billed_by: 'seconds' },
    })
    expect(String(body.usage.cost)).toBe('0.00005') // $0.0001 a second

    await expectError(
      await speak({ model: 'demo/speech', input }),
      400,
      'invalid_request',
      /response_format: the demo speech model produces wav or pcm only, not mp3/,
      'response_format',
    )
  })
})
