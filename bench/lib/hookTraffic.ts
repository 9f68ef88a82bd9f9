/**
 * Hook traffic as Claude Code sends it, for the hooks benchmark: payloads of
 * every shape, a keep-alive HTTP client, and session rounds that check every
 * answer. The rounds run in a small child process (bench/child/hookRounds.ts),
 * so that the client's own heap and garbage collection stay out of the times.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

export const ENDPOINTS = ['session_start', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'pre_compact', 'session_end'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

// ---------------------------------------------------------------------------------------------
// The HTTP client: one keep-alive connection, requests one at a time

export interface Reply {
  ms: number;
  status: number;
  body: string;
  info: Record<string, unknown> | null;
  reusedSocket: boolean;
}

export class HookClient {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  /** Requests that had to open a new connection. */
  connections = 0;

  constructor(
    private readonly port: number,
    private readonly token: string,
    private readonly projectDir: string,
  ) {}

  /** Times one request from just before it is sent to the end of the response body. */
  request(method: 'GET' | 'POST', urlPath: string, body?: unknown): Promise<Reply> {
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body), 'utf8');
    const headers: http.OutgoingHttpHeaders = {
      Authorization: `Bearer ${this.token}`,
      // As hooks/ltm-hook.sh sends it.
      'X-LTM-Project': this.projectDir,
    };
    if (data) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = data.length;
    }
    return new Promise<Reply>((resolve, reject) => {
      const t0 = performance.now();
      const req = http.request({ agent: this.agent, host: '127.0.0.1', port: this.port, method, path: urlPath, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const elapsed = performance.now() - t0;
          const rawInfo = res.headers['x-ltm-info'];
          if (!req.reusedSocket) this.connections++;
          resolve({
            ms: elapsed,
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            info: typeof rawInfo === 'string' ? (JSON.parse(rawInfo) as Record<string, unknown>) : null,
            reusedSocket: req.reusedSocket,
          });
        });
      });
      req.on('error', reject);
      req.end(data ?? undefined);
    });
  }

  async hook(event: Endpoint, body: unknown): Promise<Reply> {
    const reply = await this.request('POST', `/hook/${event}`, body);
    if (reply.status !== 200) throw new Error(`POST /hook/${event} answered ${reply.status}: ${reply.body}`);
    return reply;
  }

  close(): void {
    this.agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Payloads, shaped as Claude Code sends them (../shared/notes/claude-code.md)

export interface SessionPayloads {
  id: string;
  common: Record<string, unknown>;
}

export function session(projectDir: string): SessionPayloads {
  const id = randomUUID();
  const slug = projectDir.replace(/[^A-Za-z0-9]/g, '-');
  return {
    id,
    common: { session_id: id, transcript_path: path.join(os.homedir(), '.claude', 'projects', slug, `${id}.jsonl`), cwd: projectDir },
  };
}

export function sessionStartPayload(s: SessionPayloads): Record<string, unknown> {
  return { ...s.common, hook_event_name: 'SessionStart', source: 'startup' };
}

export interface PostShape {
  key: string;
  label: string;
  failed: boolean;
  payload: (s: SessionPayloads, toolUseId: string) => Record<string, unknown>;
}

const BASH_INPUT = { command: 'npm run test:unit -- --grep store', description: 'Run the store unit tests' };

/** PostToolUse payloads: tool_response as an object, a string or an array of content blocks; success and failure. */
export const POST_SHAPES: readonly PostShape[] = [
  {
    key: 'object-ok',
    label: 'object, success',
    failed: false,
    payload: (s, id) => ({
      ...s.common,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: BASH_INPUT,
      tool_response: { stdout: '  42 passing (1s)\n', stderr: '', interrupted: false, isImage: false },
      tool_use_id: id,
      duration_ms: 1873,
    }),
  },
  {
    key: 'object-fail',
    label: 'object, failure (interrupted)',
    failed: true,
    payload: (s, id) => ({
      ...s.common,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: BASH_INPUT,
      tool_response: { stdout: '  12 passing\n', stderr: '', interrupted: true, isImage: false },
      tool_use_id: id,
      duration_ms: 30_000,
    }),
  },
  {
    key: 'string-ok',
    label: 'string, success',
    failed: false,
    payload: (s, id) => ({
      ...s.common,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'WebFetch',
      tool_input: { url: 'https://nodejs.org/api/http.html', prompt: 'keepAliveTimeout default' },
      tool_response: 'The default keepAliveTimeout of an http.Server is 5000 ms.',
      tool_use_id: id,
      duration_ms: 912,
    }),
  },
  {
    key: 'string-fail',
    label: 'string, failure',
    failed: true,
    payload: (s, id) => ({
      ...s.common,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'Read',
      tool_input: { file_path: path.join(String(s.common.cwd), 'src/missing.ts') },
      tool_response: "Error: ENOENT: no such file or directory, open 'src/missing.ts'",
      tool_use_id: id,
      duration_ms: 3,
    }),
  },
  {
    key: 'array-ok',
    label: 'content blocks, success (MCP)',
    failed: false,
    payload: (s, id) => ({
      ...s.common,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'mcp__ltm__recall',
      tool_input: { query: 'postgres migration', limit: 5 },
      tool_response: [{ type: 'text', text: '{"success":true,"results":[{"id":"mem_0a1b2c3d","topic":"postgres migration lock"}]}' }],
      tool_use_id: id,
      duration_ms: 19,
      mcp_server: { name: 'ltm', source: 'project' },
    }),
  },
  {
    key: 'array-fail',
    label: 'content blocks, failure (MCP)',
    failed: true,
    payload: (s, id) => ({
      ...s.common,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'mcp__ltm__get_memory',
      tool_input: { id: 'mem_00000000' },
      tool_response: [{ type: 'text', text: 'Error: no memory with ID mem_00000000' }],
      tool_use_id: id,
      duration_ms: 7,
      mcp_server: { name: 'ltm', source: 'project' },
    }),
  },
  {
    key: 'failure-event',
    label: 'PostToolUseFailure event',
    failed: true,
    payload: (s, id) => ({
      ...s.common,
      permission_mode: 'default',
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      tool_input: BASH_INPUT,
      error: 'Exit code 1\n  1 failing',
      tool_use_id: id,
    }),
  },
];

/** Prompts as a person types them, some about what the bench corpus holds, some about nothing in it. */
/** What the rounds' user_prompt_submit sends, in turn: about the corpus, about nothing in it, a short answer. */
export const PROMPTS = [
  'The postgres migration keeps timing out on the staging deploy, can you check the retry logic?',
  'Why does the react component render twice when the cache is cold?',
  'Write a haiku about autumn leaves falling on a quiet pond',
  'The docker build fails in CI with a permission error on the cache directory',
  'yes, go ahead',
];

export function toolUseId(): string {
  return `toolu_${randomBytes(12).toString('base64url')}`;
}


export function shapeKey(shape: PostShape): string {
  return `post_tool_use:${shape.key}`;
}

/** The additionalContext of a session_start answer; throws when the answer is not what Claude Code expects. */
export function sessionStartContext(body: string): string {
  const parsed = JSON.parse(body) as { hookSpecificOutput?: { hookEventName?: unknown; additionalContext?: unknown } };
  const out = parsed.hookSpecificOutput;
  if (out?.hookEventName !== 'SessionStart' || typeof out.additionalContext !== 'string' || !out.additionalContext.startsWith('## Long-term memory')) {
    throw new Error(`session_start answered ${body.slice(0, 200)}`);
  }
  return out.additionalContext;
}

// ---------------------------------------------------------------------------------------------
// Session rounds

export interface RoundsJob {
  port: number;
  token: string;
  projectDir: string;
  warmupRounds: number;
  rounds: number;
  /**
   * Check every answer as the LTM server gives it (the default). Off for the
   * bare HTTP server that shows the machine's floor: it answers `{}` to all.
   */
  checkAnswers?: boolean;
}

export interface RoundsResult {
  /** Timed samples by row key (endpoints, post_tool_use shapes, health). */
  samples: Record<string, number[]>;
  firstSessionStartMs: number;
  connections: number;
  requests: number;
  context: { chars: number[]; injected: number[]; omitted: number[] };
}

/**
 * Each round is one Claude Code session as the hooks see it: GET /health,
 * session_start (new session_id), user_prompt_submit, pre_tool_use, one post_tool_use per payload
 * shape, pre_compact, session_end; requests one at a time on one connection.
 */
export async function runSessionRounds(job: RoundsJob): Promise<RoundsResult> {
  const check = job.checkAnswers !== false;
  const client = new HookClient(job.port, job.token, job.projectDir);
  const samples: Record<string, number[]> = {};
  const add = (key: string, value: number) => (samples[key] ??= []).push(value);
  const result: RoundsResult = { samples, firstSessionStartMs: NaN, connections: 0, requests: 0, context: { chars: [], injected: [], omitted: [] } };
  try {
    for (let round = 0; round < job.warmupRounds + job.rounds; round++) {
      const timed = round >= job.warmupRounds;
      const record = (key: string, reply: Reply) => {
        result.requests++;
        if (timed) add(key, reply.ms);
      };
      const s = session(job.projectDir);

      const health = await client.request('GET', '/health');
      if (health.status !== 200) throw new Error(`GET /health answered ${health.status}: ${health.body}`);
      record('health', health);

      const start = await client.hook('session_start', sessionStartPayload(s));
      record('session_start', start);
      if (round === 0) result.firstSessionStartMs = start.ms;
      const startInfo = start.info as { session: number; counted: boolean; injected: string[]; omitted: number } | null;
      if (check) {
        const additional = sessionStartContext(start.body);
        if (!startInfo?.counted) throw new Error('a new session_id was not counted as a new session');
        if (timed) {
          result.context.chars.push(additional.length);
          result.context.injected.push(startInfo.injected.length);
          result.context.omitted.push(startInfo.omitted);
        }
      }

      const ask = await client.hook('user_prompt_submit', { ...s.common, permission_mode: 'default', hook_event_name: 'UserPromptSubmit', prompt: PROMPTS[round % PROMPTS.length] });
      if (check && !Array.isArray(ask.info?.offered)) throw new Error(`user_prompt_submit answered ${ask.body.slice(0, 200)} (${JSON.stringify(ask.info)})`);
      record('user_prompt_submit', ask);

      const storeCall = toolUseId();
      const pre = await client.hook('pre_tool_use', {
        ...s.common,
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: 'mcp__ltm__store_memory',
        tool_input: { topic: 'keep-alive sockets and the hook server', content: 'Idle sockets close after 5 s.', tags: ['networking'] },
        tool_use_id: storeCall,
      });
      if (check && (pre.info?.tool_use_id !== storeCall || pre.body !== '{}')) throw new Error(`pre_tool_use answered ${pre.body} (${JSON.stringify(pre.info)})`);
      record('pre_tool_use', pre);

      for (const shape of POST_SHAPES) {
        const post = await client.hook('post_tool_use', shape.payload(s, toolUseId()));
        const expected = shape.failed ? 'failure' : 'success';
        if (check && post.info?.recorded !== expected) throw new Error(`post_tool_use (${shape.label}) recorded ${String(post.info?.recorded)}, expected ${expected}`);
        record('post_tool_use', post);
        if (timed) add(shapeKey(shape), post.ms);
      }

      const compact = await client.hook('pre_compact', { ...s.common, hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: null });
      if (check && compact.info?.compacted !== true) throw new Error(`pre_compact answered ${JSON.stringify(compact.info)}`);
      record('pre_compact', compact);

      const end = await client.hook('session_end', { ...s.common, hook_event_name: 'SessionEnd', reason: 'other' });
      const endInfo = end.info as { session: number | null } | null;
      if (check && endInfo?.session !== startInfo?.session) throw new Error(`session_end closed session ${endInfo?.session}, expected ${startInfo?.session}`);
      record('session_end', end);
    }
  } finally {
    result.connections = client.connections;
    client.close();
  }
  return result;
}
