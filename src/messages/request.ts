import { invalidRequest } from '../errors'
import type { ChatRequest } from '../schemas/chat'
import type { CountTokensRequest, MessagesRequest } from '../schemas/messages'
import { chatMessages } from './content'

/*
 * A Messages request → the gateway's chat request (docs/messages.md#how-a-request-maps), served by serveChat as any
 * chat request: OpenRouter's fields carry what chat has no field for (`reasoning` for thinking, `reasoning_details`
 * for thinking blocks sent back).
 */

type Json = Record<string, unknown>
type Tool = NonNullable<CountTokensRequest['tools']>[number]

/** Custom tools → function tools; an Anthropic server tool (web search, code execution, …) is a 400 naming its type. */
export function chatTools(tools: Tool[] | undefined): Json[] | undefined {
  if (!tools?.length) return undefined
  return tools.map((tool, i) => {
    if (tool.type && tool.type !== 'custom')
      throw invalidRequest(
        `tools.${i}: ${tool.type} is one of Anthropic's server tools, which this gateway does not run; send custom tools (name, input_schema)`,
        `tools.${i}.type`,
      )
    if (!tool.input_schema) throw invalidRequest(`tools.${i}.input_schema: is required`, `tools.${i}.input_schema`)
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        parameters: tool.input_schema,
        ...(tool.strict ? { strict: true } : {}),
      },
      ...(tool.cache_control ? { cache_control: tool.cache_control } : {}),
    }
  })
}

/** Anthropic's tool_choice → chat's tool_choice and parallel_tool_calls. */
function toolChoiceOf(choice: CountTokensRequest['tool_choice']): Json {
  if (!choice) return {}
  const single = 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use ? { parallel_tool_calls: false } : {}
  if (choice.type === 'none') return { tool_choice: 'none' }
  if (choice.type === 'any') return { tool_choice: 'required', ...single }
  if (choice.type === 'tool') return { tool_choice: { type: 'function', function: { name: choice.name } }, ...single }
  return { tool_choice: 'auto', ...single }
}

/**
 * `thinking` and `output_config.effort` → OpenRouter's `reasoning` (docs/reasoning.md): a budget is `max_tokens`,
 * adaptive (or between_tools) thinking is `enabled`, disabled is effort `none`, `display: omitted` is `exclude`.
 */
function reasoningOf(request: CountTokensRequest): Json {
  const thinking = request.thinking
  const effort = request.output_config?.effort ?? undefined
  const exclude = thinking && 'display' in thinking && thinking.display === 'omitted' ? { exclude: true } : {}
  if (thinking?.type === 'disabled') return { reasoning: { effort: 'none' } }
  if (thinking?.type === 'enabled') return { reasoning: { max_tokens: thinking.budget_tokens, ...(effort ? { effort } : {}), ...exclude } }
  if (thinking || effort) return { reasoning: { enabled: true, ...(effort ? { effort } : {}), ...exclude } }
  return {}
}

/** `output_config.format` → a json_schema response format. */
function responseFormatOf(request: CountTokensRequest): Json {
  const format = request.output_config?.format
  return format ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } } } : {}
}

/** The prompt of a Messages (or count_tokens) request as chat messages and tools; MCP servers are a 400 (none is run). */
export function chatPrompt(request: CountTokensRequest): { messages: Json[]; tools?: Json[] } {
  if (request.mcp_servers?.length) throw invalidRequest('mcp_servers: this gateway connects to no MCP server; leave mcp_servers out', 'mcp_servers')
  const tools = chatTools(request.tools)
  return { messages: chatMessages(request.system, request.messages), ...(tools ? { tools } : {}) }
}

/** A validated Messages request → the chat request serveChat serves. */
export function toChatRequest(request: MessagesRequest): ChatRequest {
  const { messages, tools } = chatPrompt(request)
  const stops = request.stop_sequences?.filter((s) => s !== '')
  const userId = request.metadata?.user_id
  const chat: Json = {
    ...(request.model ? { model: request.model } : {}),
    ...(request.models ? { models: request.models } : {}),
    ...(request.provider ? { provider: request.provider } : {}),
    messages,
    max_tokens: request.max_tokens,
    ...(tools ? { tools, ...toolChoiceOf(request.tool_choice) } : {}),
    ...reasoningOf(request),
    ...responseFormatOf(request),
    ...(stops?.length ? { stop: stops } : {}),
    ...(typeof request.temperature === 'number' ? { temperature: request.temperature } : {}),
    ...(typeof request.top_p === 'number' ? { top_p: request.top_p } : {}),
    ...(typeof request.top_k === 'number' ? { top_k: request.top_k } : {}),
    ...(userId ? { user: userId } : {}),
    ...(request.cache_control ? { cache_control: request.cache_control } : {}),
    ...(request.stream ? { stream: true } : {}),
  }
  return chat as ChatRequest
}
