import type { PolicyRun } from '../policies/run'
import type { PolicyTextStream } from '../policies/types'
import type { ChatCompletionChunk, ChatStreamRenderer } from './result'

/**
 * A renderer that passes each choice's streamed text through the host's stream policies before `render` writes it
 * (docs/policies.md#streamed-answers): a filter per choice, made when the choice first sends text; what a filter holds
 * back goes out with the choice's finishing chunk (or the error chunk of a stream that failed). Other parts pass as
 * they are.
 */
export function policyStreamRenderer<T>(render: ChatStreamRenderer<T>, policy: PolicyRun): ChatStreamRenderer<T> {
  const filters = new Map<number, PolicyTextStream | null>()
  const filterOf = (index: number): PolicyTextStream | null => {
    let filter = filters.get(index)
    if (filter === undefined) {
      filter = policy.streamFilter() ?? null
      filters.set(index, filter)
    }
    return filter
  }
  return {
    part(chunk: ChatCompletionChunk) {
      if (chunk.choices.length === 0) return render.part(chunk)
      const choices = chunk.choices.map((choice) => {
        const index = typeof choice.index === 'number' ? choice.index : 0
        const delta = choice.delta as Record<string, unknown> | undefined
        const content = typeof delta?.content === 'string' ? delta.content : undefined
        const finishing = choice.finish_reason !== null && choice.finish_reason !== undefined
        if (content === undefined && !finishing) return choice
        const filter = filterOf(index)
        if (!filter) return choice
        let text = content === undefined ? '' : filter.write(content)
        if (finishing) {
          text += filter.end()
          filters.set(index, null)
        }
        if (content === undefined && text === '') return choice
        return { ...choice, delta: { ...(delta ?? {}), content: text } }
      })
      return render.part({ ...chunk, choices })
    },
    end: () => render.end(),
    ...(render.cut ? { cut: () => render.cut!() } : {}),
    ...(render.keepAlive ? { keepAlive: () => render.keepAlive!() } : {}),
  }
}
