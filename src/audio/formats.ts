import { invalidRequest } from '../errors'
import type { SpeechFormat, TranscriptionFormat } from '../contracts'

/** The formats a transcription accepts (docs/audio.md#formats-and-magic-bytes). */
export const TRANSCRIPTION_FORMATS: readonly TranscriptionFormat[] = ['wav', 'mp3', 'flac', 'm4a', 'ogg', 'webm', 'aac']

/** Content-Type of speech output per `response_format` (`pcm` is 16-bit little-endian samples, no header). */
export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  pcm: 'audio/pcm',
  wav: 'audio/wav',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
}

const BY_EXTENSION: Record<string, TranscriptionFormat> = {
  wav: 'wav',
  wave: 'wav',
  mp3: 'mp3',
  mpga: 'mp3',
  mpeg: 'mp3',
  flac: 'flac',
  m4a: 'm4a',
  mp4: 'm4a',
  ogg: 'ogg',
  oga: 'ogg',
  opus: 'ogg',
  webm: 'webm',
  aac: 'aac',
}
const BY_MEDIA_TYPE: Record<string, TranscriptionFormat> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mpga': 'mp3',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
  'audio/mp4': 'm4a',
  'audio/m4a': 'm4a',
  'audio/x-m4a': 'm4a',
  'video/mp4': 'm4a',
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'application/ogg': 'ogg',
  'audio/webm': 'webm',
  'video/webm': 'webm',
  'audio/aac': 'aac',
  'audio/x-aac': 'aac',
  'audio/aacp': 'aac',
}

/** The format an uploaded file declares by its name's extension, else by its media type; undefined when neither says. */
export function declaredFormat(filename: string, mediaType: string): TranscriptionFormat | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase()
  return (extension ? BY_EXTENSION[extension] : undefined) ?? BY_MEDIA_TYPE[mediaType.split(';')[0].trim().toLowerCase()]
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/

/** Decodes raw standard base64 (padding optional, line breaks tolerated); 400 naming `param` for anything else. */
export function decodeBase64(text: string, param: string): Uint8Array {
  if (/^data:/i.test(text)) {
    throw invalidRequest(`${param}: must be raw base64, not a data URI (drop the "data:…;base64," prefix)`, param)
  }
  const clean = /\s/.test(text) ? text.replace(/\s+/g, '') : text
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0
  if (!BASE64_RE.test(clean) || clean.length % 4 === 1 || (padding && clean.length % 4 !== 0) || clean.length === padding) {
    throw invalidRequest(`${param}: is not valid base64`, param)
  }
  const bytes = Buffer.from(clean, 'base64')
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

const ascii = (bytes: Uint8Array, at: number, text: string): boolean => {
  if (bytes.length < at + text.length) return false
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false
  return true
}

/** Size of a leading ID3v2 tag (header, body and footer), 0 when there is none. */
function id3Size(bytes: Uint8Array): number {
  if (!ascii(bytes, 0, 'ID3') || bytes.length < 10) return 0
  const size = ((bytes[6] & 0x7f) << 21) | ((bytes[7] & 0x7f) << 14) | ((bytes[8] & 0x7f) << 7) | (bytes[9] & 0x7f)
  return 10 + size + (bytes[5] & 0x10 ? 10 : 0)
}

/** An ADTS frame header (AAC): 12 sync bits, then MPEG-4/2 id, layer 00 — FFF1/FFF9 (FFF0/FFF8 with CRC). */
const isAdts = (bytes: Uint8Array, at = 0): boolean => bytes.length >= at + 7 && bytes[at] === 0xff && (bytes[at + 1] & 0xf6) === 0xf0

/** An MPEG audio frame header (MP3 and its layers I/II): 11 sync bits, no reserved version, layer, bitrate or rate. */
function isMpegFrame(bytes: Uint8Array, at = 0): boolean {
  if (bytes.length < at + 4 || bytes[at] !== 0xff || (bytes[at + 1] & 0xe0) !== 0xe0) return false
  const version = (bytes[at + 1] >> 3) & 3
  const layer = (bytes[at + 1] >> 1) & 3
  const bitrate = bytes[at + 2] >> 4
  const rate = (bytes[at + 2] >> 2) & 3
  return version !== 1 && layer !== 0 && bitrate !== 15 && rate !== 3
}

/**
 * The format of audio bytes by their magic bytes: RIFF…WAVE (wav), an ID3v2 tag or an MPEG frame sync (mp3), fLaC
 * (flac), `ftyp` at offset 4 (m4a/mp4), OggS (ogg), EBML 1A 45 DF A3 (webm), an ADTS sync FFF1/FFF9 or ADIF (aac).
 * An ID3 tag followed by ADTS frames is aac. Undefined when none matches.
 */
export function sniffFormat(bytes: Uint8Array): TranscriptionFormat | undefined {
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WAVE')) return 'wav'
  if (ascii(bytes, 0, 'fLaC')) return 'flac'
  if (ascii(bytes, 0, 'OggS')) return 'ogg'
  if (bytes.length >= 4 && bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'webm'
  if (ascii(bytes, 4, 'ftyp')) return 'm4a'
  if (ascii(bytes, 0, 'ADIF')) return 'aac'
  const tag = id3Size(bytes)
  if (tag) return isAdts(bytes, tag) ? 'aac' : 'mp3'
  if (isAdts(bytes)) return 'aac'
  if (isMpegFrame(bytes)) return 'mp3'
  return undefined
}

const SIGNATURE: Record<TranscriptionFormat, string> = {
  wav: 'a RIFF/WAVE header',
  mp3: 'an ID3 tag or an MPEG frame sync',
  flac: 'the fLaC marker',
  m4a: 'an ftyp box',
  ogg: 'the OggS capture pattern',
  webm: 'an EBML header',
  aac: 'an ADTS frame sync (FFF1/FFF9)',
}

/** 400 naming `param` unless the bytes are of the declared format (by magic bytes). */
export function assertFormat(bytes: Uint8Array, declared: TranscriptionFormat, param: string): void {
  const actual = sniffFormat(bytes)
  if (actual === declared) return
  const seen = actual ? `it looks like ${actual}` : 'its format is not recognised'
  throw invalidRequest(`${param}: the audio is not ${declared} (expected ${SIGNATURE[declared]}); ${seen}`, param)
}

// ---- duration: what a per-second price bills when the upstream reports no duration ----

const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8)
const u32le = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0

function wavDuration(b: Uint8Array): number | undefined {
  let byteRate = 0
  for (let at = 12; at + 8 <= b.length; ) {
    const size = u32le(b, at + 4)
    if (ascii(b, at, 'fmt ') && size >= 16) byteRate = u32le(b, at + 16)
    if (ascii(b, at, 'data')) {
      const available = b.length - at - 8
      return byteRate ? Math.min(size, available) / byteRate : undefined
    }
    at += 8 + size + (size & 1)
  }
  return undefined
}

function flacDuration(b: Uint8Array): number | undefined {
  // STREAMINFO is the first metadata block: sample rate (20 bits) and total samples (36 bits) from its 10th byte.
  if (b.length < 8 + 34 || (b[4] & 0x7f) !== 0) return undefined
  const at = 8 + 10
  const rate = (b[at] << 12) | (b[at + 1] << 4) | (b[at + 2] >> 4)
  const total = (b[at + 3] & 0x0f) * 2 ** 32 + u32be(b, at + 4)
  return rate && total ? total / rate : undefined
}

const MPEG_BITRATES = {
  // [version 1: layer I, II, III][version 2/2.5: layer I, II & III], kbit/s by index
  v1: [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  v2: [
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
}
const MPEG_RATES = [
  [11025, 12000, 8000],
  [0, 0, 0],
  [22050, 24000, 16000],
  [44100, 48000, 32000],
] // by version bits

function mp3Duration(b: Uint8Array): number | undefined {
  let at = id3Size(b)
  let seconds = 0
  let frames = 0
  while (isMpegFrame(b, at)) {
    const versionBits = (b[at + 1] >> 3) & 3
    const layer = 4 - ((b[at + 1] >> 1) & 3) // 1, 2 or 3
    const v1 = versionBits === 3
    const kbps = v1 ? MPEG_BITRATES.v1[layer - 1][b[at + 2] >> 4] : MPEG_BITRATES.v2[layer === 1 ? 0 : 1][b[at + 2] >> 4]
    const rate = MPEG_RATES[versionBits][(b[at + 2] >> 2) & 3]
    const padding = (b[at + 2] >> 1) & 1
    if (!kbps || !rate) break
    const samples = layer === 1 ? 384 : layer === 3 && !v1 ? 576 : 1152
    const length = layer === 1 ? (Math.floor((12 * kbps * 1000) / rate) + padding) * 4 : Math.floor(((samples / 8) * kbps * 1000) / rate) + padding
    if (at + length > b.length) break
    seconds += samples / rate
    frames++
    at += length
  }
  return frames ? seconds : undefined
}

const AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

function aacDuration(b: Uint8Array): number | undefined {
  let at = id3Size(b)
  let seconds = 0
  while (isAdts(b, at)) {
    const rate = AAC_RATES[(b[at + 2] >> 2) & 0x0f]
    const length = ((b[at + 3] & 0x03) << 11) | (b[at + 4] << 3) | (b[at + 5] >> 5)
    if (!rate || length < 7 || at + length > b.length) break
    seconds += (1024 * ((b[at + 6] & 0x03) + 1)) / rate
    at += length
  }
  return seconds || undefined
}

function oggDuration(b: Uint8Array): number | undefined {
  // The rate and pre-skip from the first packet (Opus or Vorbis identification header), the length from the last
  // page's granule position.
  if (b.length < 28) return undefined
  const first = 27 + b[26]
  let rate = 0
  let preSkip = 0
  if (ascii(b, first, 'OpusHead')) {
    rate = 48000
    preSkip = u16le(b, first + 10)
  } else if (b[first] === 1 && ascii(b, first + 1, 'vorbis')) {
    rate = u32le(b, first + 12)
  }
  if (!rate) return undefined
  for (let at = b.length - 27; at >= 0; at--) {
    if (b[at] === 0x4f && ascii(b, at, 'OggS')) {
      const granule = u32le(b, at + 6) + u32le(b, at + 10) * 2 ** 32
      return granule > preSkip ? (granule - preSkip) / rate : undefined
    }
  }
  return undefined
}

function m4aDuration(b: Uint8Array): number | undefined {
  const find = (from: number, to: number, type: string): [number, number] | undefined => {
    for (let at = from; at + 8 <= to; ) {
      let size = u32be(b, at)
      let header = 8
      if (size === 1 && at + 16 <= to) {
        size = u32be(b, at + 8) * 2 ** 32 + u32be(b, at + 12)
        header = 16
      } else if (size === 0) size = to - at
      if (size < header) return undefined
      if (ascii(b, at + 4, type)) return [at + header, Math.min(at + size, to)]
      at += size
    }
    return undefined
  }
  const moov = find(0, b.length, 'moov')
  const mvhd = moov && find(moov[0], moov[1], 'mvhd')
  if (!mvhd) return undefined
  const at = mvhd[0]
  const version = b[at]
  const [scale, duration] = version === 1 ? [u32be(b, at + 20), u32be(b, at + 24) * 2 ** 32 + u32be(b, at + 28)] : [u32be(b, at + 12), u32be(b, at + 16)]
  return scale && duration ? duration / scale : undefined
}

function webmDuration(b: Uint8Array): number | undefined {
  // EBML: element ids keep their length marker, sizes drop it; a size of all ones is unknown (to the parent's end).
  const vint = (at: number, keepMarker: boolean): [number, number] | undefined => {
    const first = b[at]
    if (first === undefined || first === 0) return undefined
    const length = Math.clz32(first) - 23
    if (at + length > b.length) return undefined
    let value = keepMarker ? first : first & (0xff >> length)
    let allOnes = value === 0xff >> length
    for (let i = 1; i < length; i++) {
      value = value * 256 + b[at + i]
      if (b[at + i] !== 0xff) allOnes = false
    }
    return [allOnes && !keepMarker ? -1 : value, length]
  }
  const children = function* (from: number, to: number): Generator<[number, number, number]> {
    for (let at = from; at < to; ) {
      const id = vint(at, true)
      const size = id && vint(at + id[1], false)
      if (!id || !size) return
      const start = at + id[1] + size[1]
      const end = size[0] === -1 ? to : Math.min(start + size[0], to)
      yield [id[0], start, end]
      if (size[0] === -1 && id[0] !== 0x18538067) return // an unknown-size cluster: nothing more to learn
      at = end
    }
  }
  const float = (start: number, end: number) => {
    const view = new DataView(b.buffer, b.byteOffset + start, end - start)
    return end - start === 4 ? view.getFloat32(0) : end - start === 8 ? view.getFloat64(0) : undefined
  }
  for (const [id, start, end] of children(0, b.length)) {
    if (id !== 0x18538067) continue // Segment
    for (const [childId, childStart, childEnd] of children(start, end)) {
      if (childId !== 0x1549a966) continue // Info
      let scale = 1_000_000
      let duration: number | undefined
      for (const [infoId, s, e] of children(childStart, childEnd)) {
        if (infoId === 0x2ad7b1) {
          // TimecodeScale
          scale = 0
          for (let i = s; i < e; i++) scale = scale * 256 + b[i]
        } else if (infoId === 0x4489) duration = float(s, e) // Duration, in timecode units
      }
      return duration && scale ? (duration * scale) / 1e9 : undefined
    }
  }
  return undefined
}

const MEASURE: Record<TranscriptionFormat, (bytes: Uint8Array) => number | undefined> = {
  wav: wavDuration,
  flac: flacDuration,
  mp3: mp3Duration,
  aac: aacDuration,
  ogg: oggDuration,
  m4a: m4aDuration,
  webm: webmDuration,
}

/** Assumed bitrate of compressed audio whose length cannot be read from its headers: 128 kbit/s. */
const FALLBACK_BYTES_PER_SECOND = 16_000

/**
 * The length of a clip in seconds, rounded up to the millisecond: read from its headers or frames (WAV data size,
 * FLAC STREAMINFO, MP3 and ADTS frames, Ogg granule position, MP4 mvhd, WebM Info/Duration); when they do not tell,
 * estimated from its size at 128 kbit/s (`estimated: true`).
 */
export function measureDuration(bytes: Uint8Array, format: TranscriptionFormat): { seconds: number; estimated: boolean } {
  let seconds: number | undefined
  try {
    seconds = MEASURE[format](bytes)
  } catch {
    seconds = undefined
  }
  if (seconds !== undefined && Number.isFinite(seconds) && seconds > 0) return { seconds: Math.ceil(seconds * 1000) / 1000, estimated: false }
  return { seconds: Math.ceil((bytes.byteLength / FALLBACK_BYTES_PER_SECOND) * 1000) / 1000, estimated: true }
}
