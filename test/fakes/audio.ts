/**
 * Real audio for the tests, built here independently of the gateway's code: a WAV (RIFF header + 16-bit PCM
 * samples of a tone), its duration read back, and small but well-formed headers of the other formats.
 */

/** A mono 16-bit PCM WAV of a sine tone: a 44-byte RIFF/WAVE header and `seconds × sampleRate` samples. */
export function makeWav(seconds: number, options: { sampleRate?: number; frequency?: number } = {}): Buffer {
  const { sampleRate = 16_000, frequency = 440 } = options
  const samples = Math.round(seconds * sampleRate)
  const wav = Buffer.alloc(44 + samples * 2)
  wav.write('RIFF', 0, 'ascii')
  wav.writeUInt32LE(36 + samples * 2, 4)
  wav.write('WAVE', 8, 'ascii')
  wav.write('fmt ', 12, 'ascii')
  wav.writeUInt32LE(16, 16)
  wav.writeUInt16LE(1, 20) // PCM
  wav.writeUInt16LE(1, 22) // mono
  wav.writeUInt32LE(sampleRate, 24)
  wav.writeUInt32LE(sampleRate * 2, 28)
  wav.writeUInt16LE(2, 32)
  wav.writeUInt16LE(16, 34)
  wav.write('data', 36, 'ascii')
  wav.writeUInt32LE(samples * 2, 40)
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 12_000), 44 + i * 2)
  return wav
}

/** The duration of a canonical WAV in seconds (data size / byte rate), or undefined for anything else. */
export function wavSeconds(bytes: Uint8Array): number | undefined {
  const b = Buffer.from(bytes)
  if (b.length < 44 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') return undefined
  let byteRate = 0
  for (let at = 12; at + 8 <= b.length; ) {
    const id = b.toString('ascii', at, at + 4)
    const size = b.readUInt32LE(at + 4)
    if (id === 'fmt ') byteRate = b.readUInt32LE(at + 16)
    if (id === 'data') return Math.min(size, b.length - at - 8) / byteRate
    at += 8 + size + (size & 1)
  }
  return undefined
}

/** Deterministic filler bytes (a xorshift sequence) after a format's header. */
export function filler(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length)
  let x = seed >>> 0 || 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

/** `count` silent MPEG-1 layer III frames (128 kbit/s, 44.1 kHz, 417 bytes each): a real, if silent, MP3. */
export function makeMp3(count: number): Buffer {
  const frame = Buffer.alloc(417)
  frame.set([0xff, 0xfb, 0x90, 0x64])
  return Buffer.concat(Array.from({ length: count }, () => frame))
}

/** The leading bytes that identify each speech format, as a fake upstream sends them. */
export const SPEECH_HEADERS: Record<string, Buffer> = {
  mp3: Buffer.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0]), // an empty ID3v2.4 tag
  opus: Buffer.from('OggS\x00\x02', 'latin1'),
  aac: Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc]),
  flac: Buffer.from('fLaC\x00\x00\x00\x22', 'latin1'),
  pcm: Buffer.alloc(0),
}
