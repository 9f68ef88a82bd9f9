/**
 * Runs the real Claude Code CLI (the pinned version that scripts/setup-test-deps.sh
 * installs) offline against a FakeAnthropic.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const CLAUDE_CODE_VERSION = '2.1.197';

/** Where the setup script installs Claude Code; LTM_TEST_CLAUDE overrides it. */
export function claudeBinary(): string {
  const configured = process.env.LTM_TEST_CLAUDE;
  const cacheRoot = process.env.LTM_TEST_CACHE ?? path.join(os.homedir(), '.cache', 'ltm-test');
  const binary = configured ?? path.join(cacheRoot, `claude-code-${CLAUDE_CODE_VERSION}`, 'node_modules', '.bin', 'claude');
  if (!fs.existsSync(binary)) {
    throw new Error(`Claude Code ${CLAUDE_CODE_VERSION} is not installed at ${binary}: run scripts/setup-test-deps.sh`);
  }
  return binary;
}

export interface ClaudeRun {
  status: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** The parsed `--output-format json` result, when stdout held one. */
  result: { result?: string; session_id?: string; is_error?: boolean } | null;
}

export interface ClaudeRunOptions {
  cwd: string;
  modelUrl: string;
  /** Extra environment, e.g. LTM_PORT and LTM_TOKEN as an LTM terminal has them. */
  env?: Record<string, string | undefined>;
  args?: string[];
  home: string;
  timeoutMs?: number;
  /** What --allowedTools allows (default: the ltm server of .mcp.json and Read). */
  allowedTools?: string;
}

/** Runs `claude -p <prompt>`; never uses --bare (it would skip hooks and .mcp.json). */
export function runClaude(prompt: string, options: ClaudeRunOptions): Promise<ClaudeRun> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    HOME: options.home,
    ANTHROPIC_BASE_URL: options.modelUrl,
    ANTHROPIC_API_KEY: 'sk-test-dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_AUTO_MEMORY: '1',
    ENABLE_TOOL_SEARCH: 'false',
    LTM_PORT: undefined,
    LTM_TOKEN: undefined,
    LTM_MCP_URL: undefined,
    ...options.env,
  };
  const args = ['-p', prompt, '--output-format', 'json', '--allowedTools', options.allowedTools ?? 'mcp__ltm,Read', ...(options.args ?? [])];
  const started = Date.now();
  return new Promise((resolve, reject) => {
    // Async spawn: the fake model runs in this process and must keep answering.
    const child = spawn(claudeBinary(), args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      let result: ClaudeRun['result'] = null;
      try {
        result = JSON.parse(stdout) as ClaudeRun['result'];
      } catch {
        result = null;
      }
      resolve({ status, stdout, stderr, durationMs: Date.now() - started, result });
    });
  });
}

export interface HookAttachment {
  type: string;
  hookName: string;
  hookEvent: string;
  command?: string;
  stderr?: string;
}

/** The hook results Claude Code recorded in a session's transcript (`attachment` lines). */
export function hookAttachments(home: string, sessionId: string): HookAttachment[] {
  const projects = path.join(home, '.claude', 'projects');
  const file = fs
    .readdirSync(projects)
    .map((dir) => path.join(projects, dir, `${sessionId}.jsonl`))
    .find((f) => fs.existsSync(f));
  if (!file) throw new Error(`no transcript for session ${sessionId}`);
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { attachment?: HookAttachment }).attachment)
    .filter((a): a is HookAttachment => a !== undefined && a.type.startsWith('hook_'));
}

/** A non-interactive `claude` subcommand (`plugin install …`) with a scratch HOME; no model is asked. */
export function claudeCommand(args: string[], options: { home: string; cwd: string }): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env, HOME: options.home, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1' };
  const r = spawnSync(claudeBinary(), args, { cwd: options.cwd, env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
