/** A 44-byte canonical RIFF/WAVE header for 16-bit PCM. */
export function wavHeader(dataBytes: number, sampleRate: number, channels = 1): Uint8Array {
  const header = new Uint8Array(44)
  const view = new DataView(header.buffer)
  const text = (at: number, value: string) => {
    for (let i = 0; i < value.length; i++) header[at + i] = value.charCodeAt(i)
  }
  text(0, 'RIFF')
  view.setUint32(4, 36 + dataBytes, true)
  text(8, 'WAVE')
  text(12, 'fmt ')
  view.setUint32(16, 16, true) // fmt chunk size
  view.setUint16(20, 1, true) // PCM
  view.setUint16(22, channels, true)
  view.setUint32(24, sampleRate, true)
  view.setUint32(28, sampleRate * channels * 2, true) // byte rate
  view.setUint16(32, channels * 2, true) // block align
  view.setUint16(34, 16, true) // bits per sample
  text(36, 'data')
  view.setUint32(40, dataBytes, true)
  return header
}

/** 16-bit little-endian PCM of a sine tone that fades in and out (no clicks), `seconds` long. */
export function sineTone(seconds: number, options: { sampleRate?: number; frequency?: number; amplitude?: number } = {}): Uint8Array {
  const { sampleRate = 24_000, frequency = 440, amplitude = 0.3 } = options
  const count = Math.max(1, Math.round(seconds * sampleRate))
  const pcm = new Uint8Array(count * 2)
  const view = new DataView(pcm.buffer)
  const fade = Math.min(Math.floor(count / 2), Math.round(sampleRate * 0.01))
  for (let i = 0; i < count; i++) {
    const envelope = fade ? Math.min(1, i / fade, (count - 1 - i) / fade) : 1
    view.setInt16(i * 2, Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * amplitude * envelope * 32767), true)
  }
  return pcm
}
