/**
 * Codex (`@openai/codex`, from the repo's node_modules) run non-interactively (`codex exec --json`) against the
 * gateway over real HTTP on 127.0.0.1, with the README's `config.toml` alone (its `base_url` pointed at the test's
 * gateway, its `model` at the test's models; the key in the variable it names): a plain prompt, and a tool round trip
 * (the fake upstream calls Codex's shell tool, Codex runs the command in a temporary folder and sends its output, the
 * fake answers that), natively (the openai() preset, to the fake OpenAI's Responses API, test/fakes/openai-responses.ts)
 * and translated (an OpenAI-compatible chat model through the chat translation). The fakes refuse what OpenAI's API
 * refuses (tool types, names), so a tool Codex declares that the gateway passes on wrongly fails here
 * (docs/responses.md#codex-and-the-openai-sdk).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProviderModel } from '../../src/contracts'
import { openai } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

const root = resolve(import.meta.dirname, '../..')
const codexBin = createRequire(join(root, 'package.json')).resolve('@openai/codex/bin/codex.js')
const readme = readFileSync(join(root, 'README.md'), 'utf8')
/** The README's Codex `config.toml` (the first ```toml block). */
const readmeConfig = /```toml\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const model = (id: string, upstreamId: string): ProviderModel => ({
  id,
  upstreamId,
  pricing: PRICING,
  maxCompletionTokens: 1000,
  supportedParameters: ['tools', 'tool_choice', 'max_tokens', 'reasoning'],
})
/** The command the fake has Codex's shell tool run, and what it prints. */
const PROOF = 'codex-ran-this'
const COMMAND = `echo ${PROOF}`

/**
 * Kept offline: Codex's update check, plugins, apps and analytics of its own reach github.com and chatgpt.com; none of
 * them changes what it sends the gateway (its tools and input are the same with and without these).
 */
const OFFLINE = [
  ...['plugins', 'apps', 'remote_plugin', 'plugin_sharing', 'in_app_updates'].flatMap((feature) => ['--disable', feature]),
  ...['check_for_update_on_startup=false', 'analytics.enabled=false'].flatMap((setting) => ['-c', setting]),
]
/** The tools Codex 0.171.0 declares with the README's config. */
const CODEX_TOOLS = [
  'function:exec_command',
  'function:write_stdin',
  'function:request_user_input',
  'function:view_image',
  'namespace:multi_agent_v1',
  'function:get_goal',
  'function:create_goal',
  'function:update_goal',
]

let fake: FakeOpenAI
let t: TestGateway
let key: string
const scratch = mkdtempSync(join(tmpdir(), 'agent-codex-'))

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  t = await startGateway({
    retry: { maxRetries: 0 },
    providers: [
      openai({ apiKey: 'sk-upstream', baseURL: fake.url, models: [model('openai/gpt-test', 'gpt-test')] }),
      // An OpenAI-compatible host without the Responses API: Codex's requests to it go through the chat translation.
      openaiCompatible({ slug: 'compat', name: 'Compat', baseURL: fake.url, apiKey: 'sk-upstream', models: [model('compat/gpt-test', 'gpt-test')] }),
    ],
  })
  key = (await createCustomer(t.gateway, { credits: '5' })).key
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
  rmSync(scratch, { recursive: true, force: true })
})

interface CodexRun {
  code: number | null
  events: Record<string, any>[]
  stderr: string
  /** The folder Codex ran in. */
  cwd: string
}

/** Runs `codex exec --json <prompt>` with the README's config.toml for `modelId`, in a fresh CODEX_HOME and folder. */
async function runCodex(name: string, modelId: string, prompt: string): Promise<CodexRun> {
  const home = join(scratch, name, 'codex-home')
  const cwd = join(scratch, name, 'work')
  mkdirSync(home, { recursive: true })
  mkdirSync(cwd, { recursive: true })
  const config = readmeConfig.replace(/^model = ".*"$/m, `model = "${modelId}"`).replace(/^base_url = ".*"$/m, `base_url = "${t.url}/api/v1"`)
  writeFileSync(join(home, 'config.toml'), config)
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(scratch, name), CODEX_HOME: home, GATEWAY_API_KEY: key }
  // The shell tool runs without asking and without a sandbox (the container may have none): the command is the fake's.
  const args = [codexBin, 'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...OFFLINE, '-C', cwd, prompt]
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const code = await new Promise<number | null>((done) => child.on('close', done))
  const events = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
  return { code, events, stderr, cwd }
}

const agentMessages = (run: CodexRun) => run.events.filter((e) => e.type === 'item.completed' && e.item.type === 'agent_message').map((e) => e.item.text)
const commands = (run: CodexRun) => run.events.filter((e) => e.type === 'item.completed' && e.item.type === 'command_execution').map((e) => e.item)
const errors = (run: CodexRun) =>
  run.events.filter((e) => e.type === 'error' || e.type === 'turn.failed' || (e.item?.type === 'error' && !/metadata/.test(e.item.message)))
const since = (from: number, path: string) => fake.requests.slice(from).filter((r) => r.path === path)

describe('Codex with the README config.toml alone', () => {
  it('the README has a Codex config.toml with a custom provider over the Responses API', () => {
    expect(readmeConfig).toMatch(/^model_provider = "gateway"$/m)
    expect(readmeConfig).toMatch(/^wire_api = "responses"$/m)
    expect(readmeConfig).toMatch(/^env_key = "GATEWAY_API_KEY"$/m)
  })

  for (const [how, modelId, path] of [
    ['natively (OpenAI Responses API)', 'openai/gpt-test', '/v1/responses'],
    ['translated (chat completions)', 'compat/gpt-test', '/v1/chat/completions'],
  ] as const) {
    describe(how, () => {
      it('answers a plain prompt', async () => {
        fake.ignoreTools = true
        const from = fake.requests.length
        const run = await runCodex(`plain-${path.length}`, modelId, 'Say hello')
        fake.ignoreTools = false
        expect(errors(run), run.stderr).toEqual([])
        expect(run.code).toBe(0)
        expect(agentMessages(run)).toEqual(['Hello from gpt-test: Say hello'])
        const sent = since(from, path)
        expect(sent).toHaveLength(1)
        expect(sent[0].headers.authorization).toBe('Bearer sk-upstream')
        if (path === '/v1/responses') {
          // Codex's tools reached OpenAI as Codex sent them, its namespace tool among them.
          expect(sent[0].body.tools.map((tool: any) => `${tool.type}:${tool.name}`)).toEqual(CODEX_TOOLS)
          expect(sent[0].body.store).toBe(false)
        } else {
          // Every tool a chat function tool; the namespace's under `<namespace>__<name>`.
          const tools = sent[0].body.tools
          expect(tools.every((tool: any) => tool.type === 'function')).toBe(true)
          expect(tools.map((tool: any) => tool.function.name)).toEqual([
            'exec_command',
            'write_stdin',
            'request_user_input',
            'view_image',
            ...['close_agent', 'resume_agent', 'send_input', 'spawn_agent', 'wait_agent'].map((name) => `multi_agent_v1__${name}`),
            'get_goal',
            'create_goal',
            'update_goal',
          ])
        }
      })

      it('runs its shell tool when the model calls it, and sends the output back', async () => {
        fake.toolCalls = { exec_command: JSON.stringify({ cmd: COMMAND }) }
        const from = fake.requests.length
        const run = await runCodex(`tool-${path.length}`, modelId, 'Run the proof command')
        fake.toolCalls = {}
        expect(errors(run), run.stderr).toEqual([])
        expect(run.code).toBe(0)
        const [command] = commands(run)
        expect(command.command).toContain(COMMAND)
        expect(command.exit_code).toBe(0)
        expect(command.aggregated_output.trim()).toBe(PROOF)
        const sent = since(from, path)
        expect(sent).toHaveLength(2)
        // The second turn carries the command's output, and the fake answers it.
        expect(JSON.stringify(sent[1].body)).toContain(PROOF)
        expect(agentMessages(run)).toHaveLength(1)
        expect(agentMessages(run)[0]).toMatch(/^The tool said: /)
        expect(agentMessages(run)[0]).toContain(PROOF)
      })
    })
  }
})
