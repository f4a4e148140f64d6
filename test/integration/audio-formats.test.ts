import { describe, expect, it } from 'vitest'
import { assertFormat, decodeBase64, declaredFormat, measureDuration, sniffFormat } from '../../src/audio/formats'
import { encodeMultipart } from '../../src/providers/multipart'
import { priceAudio } from '../../src/audio/pricing'
import { FormFile, parseMultipart } from '../../src/http/body'
import { makeMp3, makeWav } from '../fakes/audio'

// Minimal but well-formed files of each format, built byte by byte (what their specifications lay down).

/** FLAC: the marker and a STREAMINFO block of `seconds` at 44.1 kHz, mono, 16 bits. */
function makeFlac(seconds: number): Buffer {
  const info = Buffer.alloc(34)
  info.writeUInt16BE(4096, 0)
  info.writeUInt16BE(4096, 2)
  const packed = (44_100n << 44n) | (0n << 41n) | (15n << 36n) | BigInt(seconds * 44_100)
  info.writeBigUInt64BE(packed, 10)
  return Buffer.concat([Buffer.from('fLaC'), Buffer.from([0x80, 0, 0, 34]), info])
}

/** AAC: `count` ADTS frames (AAC LC, 44.1 kHz, stereo) of 100 bytes, 1024 samples each. */
function makeAdts(count: number): Buffer {
  const frame = Buffer.alloc(100)
  const length = frame.length
  frame.set([0xff, 0xf1, 0x50, 0x80 | ((length >> 11) & 3), (length >> 3) & 0xff, ((length & 7) << 5) | 0x1f, 0xfc])
  return Buffer.concat(Array.from({ length: count }, () => frame))
}

/** Ogg Opus: a first page with OpusHead (pre-skip 312) and a last page whose granule position ends at `seconds`. */
function makeOggOpus(seconds: number): Buffer {
  const page = (type: number, granule: bigint, packet: Buffer) => {
    const header = Buffer.alloc(27)
    header.write('OggS', 0, 'ascii')
    header[5] = type
    header.writeBigUInt64LE(granule, 6)
    header.writeUInt32LE(0x1234, 14)
    header[26] = 1
    return Buffer.concat([header, Buffer.from([packet.length]), packet])
  }
  const head = Buffer.alloc(19)
  head.write('OpusHead', 0, 'ascii')
  head[8] = 1
  head[9] = 1
  head.writeUInt16LE(312, 10)
  head.writeUInt32LE(48_000, 12)
  return Buffer.concat([page(2, 0n, head), page(0, 960n, Buffer.alloc(40)), page(4, BigInt(seconds * 48_000 + 312), Buffer.alloc(40))])
}

/** M4A: ftyp, then moov holding mvhd (version 0) with timescale 1000. */
function makeM4a(seconds: number): Buffer {
  const box = (type: string, body: Buffer) => {
    const head = Buffer.alloc(8)
    head.writeUInt32BE(8 + body.length, 0)
    head.write(type, 4, 'ascii')
    return Buffer.concat([head, body])
  }
  const mvhd = Buffer.alloc(100)
  mvhd.writeUInt32BE(1000, 12)
  mvhd.writeUInt32BE(seconds * 1000, 16)
  return Buffer.concat([
    box('ftyp', Buffer.from('M4A \0\0\0\0isomM4A ', 'latin1')),
    box('free', Buffer.alloc(4)),
    box('moov', box('mvhd', mvhd)),
    box('mdat', Buffer.alloc(32)),
  ])
}

/** WebM: an EBML header (DocType webm), a Segment of unknown size with Info (TimecodeScale 1 ms, Duration), a Cluster. */
function makeWebm(seconds: number | undefined): Buffer {
  const duration = Buffer.alloc(8)
  duration.writeDoubleBE((seconds ?? 0) * 1000)
  const info = Buffer.concat([
    Buffer.from([0x2a, 0xd7, 0xb1, 0x83, 0x0f, 0x42, 0x40]),
    seconds === undefined ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x44, 0x89, 0x88]), duration]),
  ])
  return Buffer.concat([
    Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x87, 0x42, 0x82, 0x84]),
    Buffer.from('webm'),
    Buffer.from([0x18, 0x53, 0x80, 0x67, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
    Buffer.from([0x15, 0x49, 0xa9, 0x66, 0x80 | info.length]),
    info,
    Buffer.from([0x1f, 0x43, 0xb6, 0x75, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
    Buffer.alloc(64, 1),
  ])
}

const id3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 10, ...Buffer.alloc(10)])

describe('audio formats: magic bytes, durations, base64', () => {
  const samples = {
    wav: makeWav(0.25),
    mp3: makeMp3(40),
    flac: makeFlac(2),
    m4a: makeM4a(2.5),
    ogg: makeOggOpus(1.5),
    webm: makeWebm(3),
    aac: makeAdts(43),
  } as const

  it('recognises each format by its magic bytes, and refuses the others naming what the bytes look like', () => {
    for (const [format, bytes] of Object.entries(samples)) {
      expect(sniffFormat(bytes), format).toBe(format)
      expect(() => assertFormat(bytes, format as keyof typeof samples, 'p')).not.toThrow()
      for (const other of Object.keys(samples).filter((f) => f !== format)) {
        expect(() => assertFormat(bytes, other as keyof typeof samples, 'p'), `${format} as ${other}`).toThrow(
          new RegExp(`^p: the audio is not ${other} .*; it looks like ${format}$`),
        )
      }
    }
    expect(sniffFormat(Buffer.concat([id3, makeMp3(2)]))).toBe('mp3')
    expect(sniffFormat(id3)).toBe('mp3')
    expect(sniffFormat(Buffer.concat([id3, makeAdts(2)]))).toBe('aac')
    expect(sniffFormat(Buffer.from([0xff, 0xf9, 0x50, 0x80, 0, 0, 0]))).toBe('aac')
    expect(sniffFormat(Buffer.from('ADIF\0\0\0\0'))).toBe('aac')
    expect(sniffFormat(Buffer.from('RIFF\0\0\0\0AVI LIST'))).toBeUndefined()
    expect(sniffFormat(Buffer.from([0xff, 0xff, 0xff, 0xff]))).toBeUndefined() // reserved MPEG bitrate
    expect(sniffFormat(Buffer.from('hello'))).toBeUndefined()
    expect(sniffFormat(new Uint8Array())).toBeUndefined()
  })

  it('reads the length of each format from its headers or frames', () => {
    expect(measureDuration(samples.wav, 'wav')).toEqual({ seconds: 0.25, estimated: false })
    expect(measureDuration(samples.mp3, 'mp3')).toEqual({ seconds: Math.ceil(((40 * 1152) / 44_100) * 1000) / 1000, estimated: false })
    expect(measureDuration(Buffer.concat([id3, samples.mp3]), 'mp3').seconds).toBe(1.045)
    expect(measureDuration(samples.flac, 'flac')).toEqual({ seconds: 2, estimated: false })
    expect(measureDuration(samples.m4a, 'm4a')).toEqual({ seconds: 2.5, estimated: false })
    expect(measureDuration(samples.ogg, 'ogg')).toEqual({ seconds: 1.5, estimated: false })
    expect(measureDuration(samples.webm, 'webm')).toEqual({ seconds: 3, estimated: false })
    expect(measureDuration(samples.aac, 'aac')).toEqual({ seconds: Math.ceil(((43 * 1024) / 44_100) * 1000) / 1000, estimated: false })
    // A WebM without Duration (as MediaRecorder writes it): estimated from its size at 128 kbit/s.
    const live = makeWebm(undefined)
    expect(measureDuration(live, 'webm')).toEqual({ seconds: Math.ceil((live.length / 16_000) * 1000) / 1000, estimated: true })
    // A truncated WAV counts the samples it has.
    expect(measureDuration(samples.wav.subarray(0, 44 + 3200), 'wav').seconds).toBe(0.1)
  })

  it('takes the format an upload declares by its extension, else its media type', () => {
    expect(declaredFormat('speech.WAV', '')).toBe('wav')
    expect(declaredFormat('a.mpga', 'application/octet-stream')).toBe('mp3')
    expect(declaredFormat('voice.opus', '')).toBe('ogg')
    expect(declaredFormat('movie.mp4', '')).toBe('m4a')
    expect(declaredFormat('blob', 'audio/x-wav; codecs=1')).toBe('wav')
    expect(declaredFormat('blob', 'application/octet-stream')).toBeUndefined()
    expect(declaredFormat('notes.txt', 'text/plain')).toBeUndefined()
  })

  it('decodes raw base64 only: padding optional, line breaks tolerated, anything else refused', () => {
    const text = (b: Uint8Array) => Buffer.from(b).toString('latin1')
    expect(text(decodeBase64('QUJD', 'p'))).toBe('ABC')
    expect(text(decodeBase64('QUI=', 'p'))).toBe('AB')
    expect(text(decodeBase64('QUI', 'p'))).toBe('AB')
    expect(text(decodeBase64('QQ==', 'p'))).toBe('A')
    expect(text(decodeBase64('QUJD\r\nREVG\n', 'p'))).toBe('ABCDEF')
    for (const bad of ['Q', 'QUJD=', 'QU=I', '====', '=', 'QUJ-', 'QU_D', 'QUJD!', 'QUI==']) {
      expect(() => decodeBase64(bad, 'input_audio.data'), bad).toThrow(/^input_audio\.data: is not valid base64$/)
    }
    expect(() => decodeBase64('data:audio/wav;base64,QUJD', 'p')).toThrow(/not a data URI/)
  })
})

describe('multipart/form-data', () => {
  it('serializes fields and a binary file that the platform’s own parser reads back exactly', async () => {
    const binary = Buffer.concat([Buffer.from('\r\n--\r\n--not-the-boundary\r\n\r\n'), makeWav(0.01), Buffer.from([0, 255, 13, 10, 45, 45])])
    const { body, contentType } = encodeMultipart([
      { name: 'file', filename: 'a "quoted"\nname.wav', contentType: 'audio/wav', data: binary },
      { name: 'model', value: 'whisper-1' },
      { name: 'prompt', value: 'Ünïcödé ✓ "quotes"\r\nand lines' },
      { name: 'timestamp_granularities[]', value: 'word' },
      { name: 'timestamp_granularities[]', value: 'segment' },
    ])
    expect(contentType).toMatch(/^multipart\/form-data; boundary=----model-gateway-[0-9a-f]{32}$/)
    const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData()
    const file = form.get('file') as File
    expect(file.name).toBe('a "quoted"\nname.wav') // sent as a %22quoted%22%0Aname.wav, as the HTML standard encodes it
    expect(file.type).toBe('audio/wav')
    expect(Buffer.from(await file.arrayBuffer()).equals(binary)).toBe(true)
    expect(form.get('model')).toBe('whisper-1')
    expect(form.get('prompt')).toBe('Ünïcödé ✓ "quotes"\r\nand lines')
    expect(form.getAll('timestamp_granularities[]')).toEqual(['word', 'segment'])

    // And the gateway's parser reads its own serialization back too.
    const parsed = parseMultipart(body, contentType)
    expect(parsed.model).toBe('whisper-1')
    expect((parsed.file as FormFile).filename).toBe('a "quoted"\nname.wav')
    expect(parsed['timestamp_granularities[]']).toEqual(['word', 'segment'])
    expect(parsed.file).toBeInstanceOf(FormFile)
    expect(Buffer.from((parsed.file as FormFile).data).equals(binary)).toBe(true)
  })

  it('parses what browsers and clients send: the platform’s FormData serialization', async () => {
    const wav = makeWav(0.05)
    const form = new FormData()
    form.append('model', 'openai/whisper-1')
    form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'clip.wav')
    form.append('temperature', '0.5')
    const request = new Request('http://x/', { method: 'POST', body: form })
    const parsed = parseMultipart(new Uint8Array(await request.arrayBuffer()), request.headers.get('content-type')!)
    expect(parsed.model).toBe('openai/whisper-1')
    expect(parsed.temperature).toBe('0.5')
    const file = parsed.file as FormFile
    expect([file.filename, file.type, file.size]).toEqual(['clip.wav', 'audio/wav', wav.length])
    expect(Buffer.from(file.data).equals(wav)).toBe(true)
  })

  it('follows RFC 2046: preamble and epilogue, a quoted boundary, transport padding, filename*, a part without Content-Type', () => {
    const body = Buffer.from(
      ['This is the preamble.\r\n', '--b"x\r\n'.replace('"', '')].join('') +
        [
          'Content-Disposition: form-data; name="language"\r\n\r\nfr\r\n',
          '--bx   \r\nContent-Disposition: form-data; name="file"; filename="fallback.bin"; filename*=UTF-8\'\'%C3%A9t%C3%A9.wav\r\n\r\nRIFF\r\n',
          '--bx\r\ncontent-disposition: FORM-DATA; name=prompt\r\n\r\n\r\n',
          '--bx--\r\nepilogue',
        ].join(''),
      'utf8',
    )
    const parsed = parseMultipart(body, 'multipart/form-data; charset=utf-8; boundary="bx"')
    expect(parsed.language).toBe('fr')
    expect(parsed.prompt).toBe('')
    const file = parsed.file as FormFile
    expect([file.filename, file.type, Buffer.from(file.data).toString()]).toEqual(['été.wav', 'application/octet-stream', 'RIFF'])
  })

  it('refuses what is not multipart/form-data with a 400 naming why', () => {
    const bad =
      (body: string, type = 'multipart/form-data; boundary=bx') =>
      () =>
        parseMultipart(Buffer.from(body), type)
    expect(bad('--bx\r\n\r\nx\r\n--bx--', 'multipart/form-data')).toThrow(/no boundary in Content-Type/)
    expect(bad('nothing here')).toThrow(/the boundary does not occur in the body/)
    expect(bad('--bx\r\nContent-Disposition: form-data; name="a"\r\n\r\nunclosed')).toThrow(/the last part is not closed by the boundary/)
    expect(bad('--bx\r\nContent-Disposition: attachment; name="a"\r\n\r\nx\r\n--bx--')).toThrow(/a part is not form-data/)
    expect(bad('--bx\r\nContent-Disposition: form-data\r\n\r\nx\r\n--bx--')).toThrow(/a part has no name/)
    expect(bad('--bx\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--bxjunk')).toThrow(/a boundary line does not end with CRLF/)
    try {
      bad('nothing here')()
    } catch (error) {
      expect(error).toMatchObject({ status: 400, type: 'invalid_request' })
    }
  })
})

describe('audio pricing', () => {
  const eur = '0.86'
  it('bills reported tokens where the model has token prices: text and audio input, output', () => {
    const pricing = { prompt: '0.0000025', audio: '0.000006', completion: '0.00001', audio_second: '0.0001', currency: 'USD' }
    const cost = priceAudio(
      pricing,
      { reported: { input_tokens: 130, input_token_details: { text_tokens: 30, audio_tokens: 100 }, output_tokens: 7 }, seconds: 3 },
      eur,
    )
    // 30 × 2.5e-6 + 100 × 6e-6 + 7 × 1e-5 = 0.000745
    expect(cost).toMatchObject({
      basis: 'tokens',
      inputTokens: 130,
      outputTokens: 7,
      units: 745_000_000n,
      eurUnits: 640_700_000n,
      promptUnits: 675_000_000n,
      completionUnits: 70_000_000n,
    })
    // Without details every input token is a text token (priced at `prompt`).
    expect(priceAudio(pricing, { reported: { input_tokens: 100, output_tokens: 0 } }, eur).units).toBe(250_000_000n)
  })

  it('bills seconds or characters where there is no token usage or no token price, rounding once to 12 digits', () => {
    expect(priceAudio({ prompt: '0', completion: '0', audio_second: '0.0001' }, { reported: { type: 'duration', seconds: 9 }, seconds: 9 }, eur)).toMatchObject(
      { basis: 'seconds', units: 900_000_000n, tokenPriced: false },
    )
    expect(priceAudio({ prompt: '0', completion: '0', audio_second: '0.0000001234567' }, { seconds: 1.5 }, eur)).toMatchObject({
      units: 185_185n,
      eurUnits: 159_259n,
    })
    expect(priceAudio({ prompt: '0', completion: '0', character: '0.000015', request: '0.001' }, { characters: 1000 }, eur)).toMatchObject({
      basis: 'characters',
      units: 16_000_000_000n,
    })
    // A token-priced model whose answer reported nothing: its per-character estimate, flagged by tokenPriced.
    expect(priceAudio({ prompt: '0.0000006', completion: '0.000012', character: '0.000015' }, { characters: 10 }, eur)).toMatchObject({
      basis: 'characters',
      tokenPriced: true,
      units: 150_000_000n,
    })
    // Reported tokens on a model priced per unit only: billed per unit, tokens still counted.
    expect(
      priceAudio({ prompt: '0', completion: '0', character: '0.000015' }, { characters: 10, reported: { input_tokens: 3, output_tokens: 50 } }, eur),
    ).toMatchObject({ basis: 'characters', inputTokens: 3, outputTokens: 50, units: 150_000_000n })
  })
})
