/**
 * MCP traffic for the MCP benchmark: the real MCP SDK client
 * (StreamableHTTPClientTransport) over real HTTP, as Claude Code talks to
 * `ltm serve`, or over stdio to an `ltm mcp` process it starts, as Claude
 * Code runs the plugin's server. It runs in small child processes (bench/child/mcpCalls.ts,
 * bench/child/serveStartup.ts), so the bench's large heap stays out of the times.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HookClient } from './hookTraffic';
import { peakRssMb } from './procStats';

/** Connects the SDK client (initialize, then notifications/initialized), with the bearer token if given. */
export async function connectMcp(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'ltm-bench', version: '1.0.0' });
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** Calls a tool and fails loudly on an error result: a benchmark of failures measures nothing. */
export async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
  return result;
}

export interface GeneratedCall {
  name: string;
  args: Record<string, unknown>;
}

/** Tool calls through the MCP SDK client, to whichever server. */
interface ToolCallsJob {
  warmup: number;
  /** The first is timed as "the first call after the client connects"; then each series runs warmup + reps calls. */
  first: GeneratedCall;
  /** Timed series by row key; call i of a series uses calls[i % calls.length]. */
  series: Record<string, GeneratedCall[]>;
  reps: number;
}

/** To a running server over HTTP. */
export interface McpCallsJob extends ToolCallsJob {
  kind: 'mcp';
  url: string;
  token?: string;
}

/** To an `ltm mcp` process that the client starts (`node <args>` in the project) over stdio. */
export interface StdioCallsJob extends ToolCallsJob {
  kind: 'stdio';
  args: string[];
  projectDir: string;
}

export interface BareJob {
  kind: 'bare';
  port: number;
  warmup: number;
  reps: number;
  /** The JSON body each POST sends (a tools/call, as the MCP client would). */
  body: unknown;
}

export type CallsJob = McpCallsJob | StdioCallsJob | BareJob;

export interface CallsResult {
  /** initialize + notifications/initialized (MCP only). */
  connectMs: number;
  /** The first call after connecting (MCP only). */
  firstCallMs: number;
  samples: Record<string, number[]>;
  /** The MCP session ID the server gave, if any. */
  sessionId?: string;
  /** stdio: the `ltm mcp` process's peak RSS (VmHWM) after the calls, before its input closed. */
  peakRssMb?: number | null;
}

export async function runCalls(job: CallsJob): Promise<CallsResult> {
  if (job.kind === 'bare') return runBareCalls(job);
  if (job.kind === 'mcp') return runMcpCalls(job, () => connectMcp(job.url, job.token));
  let transport: StdioClientTransport | undefined;
  return runMcpCalls(
    job,
    async () => {
      transport = new StdioClientTransport({
        command: process.execPath,
        args: job.args,
        cwd: job.projectDir,
        env: { ...(process.env as Record<string, string>), CLAUDE_PROJECT_DIR: job.projectDir },
        stderr: 'inherit',
      });
      const client = new Client({ name: 'ltm-bench', version: '1.0.0' });
      await client.connect(transport);
      return client;
    },
    () => (transport?.pid ? peakRssMb(transport.pid) : null),
  );
}

async function runMcpCalls(job: ToolCallsJob, connect: () => Promise<Client>, peakRss?: () => number | null): Promise<CallsResult> {
  let t0 = performance.now();
  const client = await connect();
  const connectMs = performance.now() - t0;
  try {
    t0 = performance.now();
    await callOk(client, job.first.name, job.first.args);
    const firstCallMs = performance.now() - t0;
    const samples: Record<string, number[]> = {};
    for (const [key, calls] of Object.entries(job.series)) {
      const times: number[] = (samples[key] = []);
      for (let i = 0; i < job.warmup + job.reps; i++) {
        const call = calls[i % calls.length]!;
        t0 = performance.now();
        await callOk(client, call.name, call.args);
        if (i >= job.warmup) times.push(performance.now() - t0);
      }
    }
    const sessionId = client.transport instanceof StreamableHTTPClientTransport ? client.transport.sessionId : undefined;
    return { connectMs, firstCallMs, samples, sessionId, ...(peakRss ? { peakRssMb: peakRss() } : {}) };
  } finally {
    await client.close();
  }
}

async function runBareCalls(job: BareJob): Promise<CallsResult> {
  const client = new HookClient(job.port, 'none', '/');
  const times: number[] = [];
  try {
    for (let i = 0; i < job.warmup + job.reps; i++) {
      const reply = await client.request('POST', '/mcp', job.body);
      if (reply.status !== 200) throw new Error(`the bare server answered ${reply.status}`);
      if (i >= job.warmup) times.push(reply.ms);
    }
  } finally {
    client.close();
  }
  return { connectMs: NaN, firstCallMs: NaN, samples: { bare: times } };
}
