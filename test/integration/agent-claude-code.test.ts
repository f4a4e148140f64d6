/**
 * Claude Code (`@anthropic-ai/claude-code`, a devDependency) run non-interactively against the gateway
 * (docs/compatibility.md#anthropics-sdk-claude-code-and-codex): `claude -p <prompt> --output-format stream-json` with
 * ANTHROPIC_BASE_URL at the gateway's API root, a gateway key and a temporary HOME, offline (only 127.0.0.1: the
 * gateway and the fakes of test/fakes/, which pick the answer by the prompt: `promptTools`). A single prompt and a
 * tool round trip (the fake model asks for Claude Code's Bash tool, Claude Code runs `echo` in a temporary folder and
 * sends its result back, the fake answers it), natively (`anthropic()` over the fake Anthropic API: Claude Haiku 4.5
 * by its bare id and by the gateway's, under an id Claude Code does not know, Claude Sonnet 5.5; a session resumed
 * after a tool call) and translated (an OpenAI-compatible model through the chat translation). The fake Anthropic
 * API refuses what Anthropic refuses (an effort or adaptive thinking on Claude Haiku 4.5, a tool turn without its
 * thinking block while thinking is on), so each of issue 32's failures shows here as Claude Code's `API Error: 400`.
 * The package ships a native binary per platform: its launcher `cli-wrapper.cjs` runs it, under the Node running the
 * tests (Node 20 does).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProviderModel } from '../../src/contracts'
import { anthropic } from '../../src/providers/anthropic'
import { anthropicModels } from '../../src/providers/models/anthropic-models'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const KEY = 'sk-ant-api03-test-key-0123456789'
const HAIKU = anthropicModels.find((m) => m.id === 'anthropic/claude-haiku-4.5')!
const SONNET = anthropicModels.find((m) => m.id === 'anthropic/claude-sonnet-5.5')!
/** Claude Haiku 4.5 under a gateway id Claude Code does not know, so it sends what it sends an unknown model. */
const QUICK: ProviderModel = { ...HAIKU, id: 'acme/quick-coder', name: 'Acme: Quick coder' }
const CODER: ProviderModel = { id: 'fakeai/coder', upstreamId: 'coder', name: 'Fake coder', pricing: { prompt: '0.000001', completion: '0.000002' } }
const PLAIN_PROMPT = 'Say hello'
/** The prompt for which both fakes ask for Claude Code's Bash tool. */
const TOOL_PROMPT = 'Run the echo command'
const BASH = { name: 'Bash', input: { command: 'echo hi-from-bash', description: 'Print a greeting' } }

/** Claude Code's launcher, resolved from the repository's node_modules. */
const launcher = join(
  dirname(createRequire(resolve(import.meta.dirname, '../../package.json')).resolve('@anthropic-ai/claude-code/package.json')),
  'cli-wrapper.cjs',
)

/** A new temporary folder (Claude Code's HOME, or the folder it works in: its sessions are kept per folder). */
async function folder(prefix = 'claude-code-work-'): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), prefix))
  folders.push(path)
  return path
}

let fake: FakeAnthropic
let openai: FakeOpenAI
let t: TestGateway
let customer: Awaited<ReturnType<typeof createCustomer>>
let home: string
/** Temporary folders made by the tests, removed at the end. */
const folders: string[] = []

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: KEY })
  openai = await startFakeOpenAI()
  fake.promptTools[TOOL_PROMPT] = BASH
  openai.promptTools[TOOL_PROMPT] = BASH
  // Claude Code offers its tools with every prompt: the plain prompt is answered with text.
  fake.promptTools[PLAIN_PROMPT] = null
  openai.promptTools[PLAIN_PROMPT] = null
  t = await startGateway({
    providers: [
      anthropic({ apiKey: KEY, baseURL: fake.url, models: [HAIKU, SONNET, QUICK] }),
      openaiCompatible({ slug: 'fakeai', name: 'FakeAI', baseURL: openai.url, apiKey: 'sk-fakeai', models: [CODER] }),
    ],
    retry: { maxRetries: 0 },
  })
  customer = await createCustomer(t.gateway, { credits: '5' })
  home = await folder('claude-code-home-')
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
  await openai?.close()
  for (const path of folders) await rm(path, { recursive: true, force: true })
})

interface Run {
  code: number | null
  /** The lines of `--output-format stream-json`, parsed. */
  lines: any[]
  /** The last line: the session's result. */
  result: any
  stderr: string
}

/**
 * Runs `claude -p <prompt> --output-format stream-json --verbose --model <model>` in `cwd` against the gateway, Bash
 * allowed for `echo` only; `args` are added.
 */
function claude(prompt: string, model: string, cwd: string, args: string[] = []): Promise<Run> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: tmpdir(),
    ANTHROPIC_BASE_URL: `${t.url}/api`,
    ANTHROPIC_AUTH_TOKEN: customer.key,
    ANTHROPIC_MODEL: model,
    // Its side requests (titles, summaries) go to the same model, not to its default Haiku.
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  }
  const argv = [launcher, '-p', prompt, '--output-format', 'stream-json', '--verbose', '--model', model, '--allowedTools', 'Bash(echo:*)', ...args]
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
    child.on('error', failed)
    child.on('close', (code) => {
      clearTimeout(timer)
      const lines = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
      done({ code, lines, result: lines.at(-1), stderr })
    })
  })
}

/** The `model`s of the assistant messages Claude Code received (as the gateway named them), each once. */
const answeredModels = (run: Run): string[] => [...new Set(run.lines.filter((line) => line.type === 'assistant').map((line) => line.message.model))]
/** The fake Anthropic API's /v1/messages requests since `from`. */
const anthropicSince = (from: number) => fake.requests.slice(from).filter((r) => r.path === '/v1/messages')
/** The block types of each turn of a Messages body (`assistant:thinking,tool_use`). */
const turnsOf = (body: any): string[] =>
  body.messages.map((m: any) => `${m.role}:${(typeof m.content === 'string' ? ['text'] : m.content.map((b: any) => b.type)).join(',')}`)
const toolResultText = (body: any): string =>
  body.messages
    .at(-1)
    .content.filter((b: any) => b.type === 'tool_result')
    .map((b: any) => (typeof b.content === 'string' ? b.content : b.content.map((c: any) => c.text).join('')))
    .join('')

/** Asserts a successful session whose answer begins with `text`. */
function expectSuccess(run: Run, text: string): void {
  expect({ code: run.code, subtype: run.result?.subtype, is_error: run.result?.is_error, stderr: run.stderr }).toMatchObject({
    code: 0,
    subtype: 'success',
    is_error: false,
  })
  expect(run.result.result.startsWith(text)).toBe(true)
}

describe('Claude Code against the gateway, natively (anthropic() over the fake Anthropic API)', () => {
  it('answers a single prompt on Claude Haiku 4.5 by its bare id, naming the model as Claude Code did', async () => {
    const from = fake.requests.length
    const run = await claude(PLAIN_PROMPT, 'claude-haiku-4-5', await folder())
    expectSuccess(run, 'Hello from claude-haiku-4-5: ')
    expect(run.result.result.endsWith(PLAIN_PROMPT)).toBe(true)
    expect(answeredModels(run)).toEqual(['claude-haiku-4-5'])
    const sent = anthropicSince(from)
    expect(sent.length).toBeGreaterThan(0)
    for (const { body } of sent) {
      expect(body.model).toBe('claude-haiku-4-5')
      expect(body.thinking).toMatchObject({ type: 'enabled', budget_tokens: 31_999 })
      expect(body.output_config).toBeUndefined()
    }
  })

  it('runs a tool round trip on Claude Haiku 4.5 by its bare id: Bash runs, its result is answered, the thinking block sent back', async () => {
    const from = fake.requests.length
    const run = await claude(TOOL_PROMPT, 'claude-haiku-4-5', await folder())
    expectSuccess(run, 'The tools said: hi-from-bash')
    expect(answeredModels(run)).toEqual(['claude-haiku-4-5'])
    const last = anthropicSince(from).at(-1)!.body
    expect(turnsOf(last).slice(-2)).toEqual(['assistant:thinking,tool_use', 'user:tool_result'])
    expect(last.messages.at(-2).content[1]).toMatchObject({ type: 'tool_use', name: 'Bash', input: BASH.input })
    expect(toolResultText(last)).toMatch(/^hi-from-bash(\n|$)/)
  })

  it('resumes a session stopped after a tool call (--max-turns 1, then --continue) with its thinking block kept', async () => {
    // Claude Code leaves out the thinking blocks of an answer whose `model` is not the one it asked for when it loads
    // a session: renamed to the gateway's id, the resumed tool turn had none, a 400 with thinking on (issue 32).
    const cwd = await folder()
    const stopped = await claude(TOOL_PROMPT, 'claude-haiku-4-5', cwd, ['--max-turns', '1'])
    expect(stopped.result.subtype).toBe('error_max_turns')
    const from = fake.requests.length
    const run = await claude(PLAIN_PROMPT, 'claude-haiku-4-5', cwd, ['--continue'])
    expectSuccess(run, 'The tools said: hi-from-bash')
    const sent = anthropicSince(from)
    expect(sent.length).toBe(1)
    expect(turnsOf(sent[0].body).slice(-2)).toEqual(['assistant:thinking,tool_use', 'user:tool_result,text'])
  }, 30_000)

  it('runs a tool round trip on Claude Haiku 4.5 by the gateway id, the answers naming the gateway id', async () => {
    const run = await claude(TOOL_PROMPT, 'anthropic/claude-haiku-4.5', await folder())
    expectSuccess(run, 'The tools said: hi-from-bash')
    expect(answeredModels(run)).toEqual(['anthropic/claude-haiku-4.5'])
  })

  it('turns the adaptive thinking and effort it sends a model it does not know into a thinking budget for Claude Haiku 4.5', async () => {
    const from = fake.requests.length
    const run = await claude(TOOL_PROMPT, 'acme/quick-coder', await folder())
    expectSuccess(run, 'The tools said: hi-from-bash')
    expect(answeredModels(run)).toEqual(['acme/quick-coder'])
    const sent = anthropicSince(from)
    expect(sent.length).toBeGreaterThan(1)
    for (const { body } of sent) {
      // Claude Code sent { type: 'adaptive' } with output_config.effort 'high': 80 % of max_tokens 32,000.
      expect(body.thinking).toMatchObject({ type: 'enabled', budget_tokens: 25_600 })
      expect(body.output_config).toBeUndefined()
    }
  })

  it('runs a tool round trip on Claude Sonnet 5.5 by its bare id, its adaptive thinking and effort passed on', async () => {
    const from = fake.requests.length
    const run = await claude(TOOL_PROMPT, 'claude-sonnet-5-5', await folder())
    expectSuccess(run, 'The tools said: hi-from-bash')
    expect(answeredModels(run)).toEqual(['claude-sonnet-5-5'])
    const last = anthropicSince(from).at(-1)!.body
    expect(last).toMatchObject({ model: 'claude-sonnet-5-5', thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } })
    expect(turnsOf(last).slice(-2)).toEqual(['assistant:thinking,tool_use', 'user:tool_result'])
  })
})

describe('Claude Code against the gateway, translated (an OpenAI-compatible model through the chat translation)', () => {
  it('answers a single prompt', async () => {
    const from = openai.requests.length
    const run = await claude(PLAIN_PROMPT, 'fakeai/coder', await folder())
    expectSuccess(run, 'Hello from coder: ')
    expect(run.result.result.endsWith(PLAIN_PROMPT)).toBe(true)
    expect(answeredModels(run)).toEqual(['fakeai/coder'])
    const sent = openai.requests.slice(from).filter((r) => r.path === '/v1/chat/completions')
    expect(sent.length).toBeGreaterThan(0)
    for (const { body } of sent) expect(body).toMatchObject({ model: 'coder', stream: true })
  })

  it('runs a tool round trip: Bash runs and its result comes back as a tool message', async () => {
    const from = openai.requests.length
    const run = await claude(TOOL_PROMPT, 'fakeai/coder', await folder())
    expectSuccess(run, 'The tool said: hi-from-bash')
    expect(answeredModels(run)).toEqual(['fakeai/coder'])
    const last = openai.requests
      .slice(from)
      .filter((r) => r.path === '/v1/chat/completions')
      .at(-1)!.body
    const call = last.messages.at(-2).tool_calls[0]
    expect(call.function).toEqual({ name: 'Bash', arguments: JSON.stringify(BASH.input) })
    expect(last.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: call.id })
    expect(JSON.stringify(last.messages.at(-1).content)).toContain('hi-from-bash')
  })
})
