/**
 * `ltm`: the engine from a terminal. Every command prints readable text, or
 * with --json the same shapes the MCP tools return. Bad arguments and unknown
 * IDs print one line to stderr, exit non-zero and change nothing.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LtmError } from './core/errors';
import { MemoryStore, initStoreFiles, type SearchScope } from './core/store';
import * as responses from './core/responses';
import { initProject, uninitProject, type Change } from './servers/claudeSetup';
import { LtmServer } from './servers/ltmServer';
import { runningServerInfo } from './servers/serverInfo';
import { errorMessage } from './core/errors';
import { DEFAULT_INJECTION_BUDGET_TOKENS, MIN_INJECTION_BUDGET_TOKENS } from './core/injection';
import { DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT } from './core/model';
import { IMPORTANCE_LEVELS, isImportance } from './core/priority';
import { storePaths } from './core/storeFiles';
import * as path from 'node:path';
// Only `version` is bundled: esbuild drops the rest of the manifest from a named JSON import.
import { version } from '../package.json';

export const VERSION: string = version;

const USAGE = `ltm ${VERSION}: long-term memory for Claude Code, kept in <project>/.claude/ltm/

Usage: ltm <command> [arguments] [--project <dir>] [--json]

Commands:
  status                                   memory counts, sessions, storage
  list [--phase N] [--tag T] [--keyword K] [--limit N] [--offset N]
                                           memories by priority (--phase 3: archived)
  recall <query> [--limit N] [--tag T] [--archives | --all]
                                           ranked search (active, archived or both)
  get <id>                                 a memory in full (counts as an access)
  store --topic T --content C [--summary S] [--tags a,b] [--difficulty X] [--auto-tag]
                                           store a new memory
  forget <id> [--purge]                    archive a memory (--purge: delete its text for good)
  restore <id> [--importance ${IMPORTANCE_LEVELS.join('|')}]
                                           bring an archived memory back at phase 0
  check                                    report integrity problems (exit 1 when there are any)
  fix [--clean-archives]                   repair them (orphaned archives are kept unless asked)
  evict                                    run one eviction cycle
  serve [--port N] [--budget TOKENS]       serve MCP and the hook endpoints on 127.0.0.1
  env                                      print export lines for a running server (eval "$(ltm env)")
  init                                     set the project up for Claude Code (hooks, MCP, commands, CLAUDE.md)
  uninit                                   remove exactly what init added (memories are kept)

Options:
  --project <dir>   the project whose .claude/ltm/ to use (default: the current directory)
  --json            print JSON instead of text
  --help, --version
`;

class UsageError extends Error {}

type Options = ParseArgsConfig['options'];

const COMMON: Options = {
  project: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const COMMAND_OPTIONS: Record<string, Options> = {
  status: {},
  list: {
    phase: { type: 'string' },
    tag: { type: 'string' },
    keyword: { type: 'string' },
    limit: { type: 'string' },
    offset: { type: 'string' },
  },
  recall: { limit: { type: 'string' }, tag: { type: 'string' }, archives: { type: 'boolean' }, all: { type: 'boolean' } },
  get: {},
  store: {
    topic: { type: 'string' },
    content: { type: 'string' },
    summary: { type: 'string' },
    tags: { type: 'string' },
    difficulty: { type: 'string' },
    'auto-tag': { type: 'boolean' },
  },
  forget: { purge: { type: 'boolean' } },
  restore: { importance: { type: 'string' } },
  check: {},
  fix: { 'clean-archives': { type: 'boolean' } },
  evict: {},
  serve: { port: { type: 'string' }, budget: { type: 'string' } },
  env: {},
  init: {},
  uninit: {},
};

/** Positional arguments each command takes. */
const POSITIONALS: Record<string, string[]> = { recall: ['query'], get: ['id'], forget: ['id'], restore: ['id'] };

function integer(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} must be a whole number ≥ ${min} (got "${value}")`);
  return Number(value);
}

export interface CliOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export async function runCli(argv: readonly string[], cwd = process.cwd()): Promise<CliOutput> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    return { stdout: USAGE, stderr: '', exitCode: command ? 0 : 2 };
  }
  if (command === '--version' || command === '-v') return { stdout: `${VERSION}\n`, stderr: '', exitCode: 0 };
  const commandOptions = COMMAND_OPTIONS[command];
  if (!commandOptions) return fail(new UsageError(`unknown command "${command}" (see ltm --help)`), 2);

  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: [...rest], options: { ...COMMON, ...commandOptions }, allowPositionals: true, strict: true });
    values = parsed.values as Record<string, string | boolean | undefined>;
    positionals = parsed.positionals;
  } catch (error) {
    return fail(new UsageError(errorMessage(error).split('\n')[0]!), 2);
  }
  if (values.help) return { stdout: USAGE, stderr: '', exitCode: 0 };
  const expected = POSITIONALS[command] ?? [];
  if (command === 'recall' && positionals.length > 1) positionals = [positionals.join(' ')];
  if (positionals.length !== expected.length) {
    const what = expected.length === 0 ? 'no arguments' : expected.map((p) => `<${p}>`).join(' ');
    return fail(new UsageError(`${command} takes ${what}${positionals.length > expected.length ? `, not "${positionals.slice(expected.length).join(' ')}"` : ''}`), 2);
  }

  const json = Boolean(values.json);
  const projectDir = path.resolve(cwd, typeof values.project === 'string' ? values.project : '.');
  try {
    if (command === 'serve') return await serve(projectDir, values);
    if (command === 'init' || command === 'uninit') {
      const changes = command === 'init' ? initProject(projectDir) : uninitProject(projectDir);
      if (command === 'init') initStoreFiles(storePaths(projectDir));
      return { stdout: `${json ? JSON.stringify({ success: true, changes }, null, 2) : setupText(command, projectDir, changes)}\n`, stderr: '', exitCode: 0 };
    }
    if (command === 'env') {
      const info = await runningServerInfo(storePaths(projectDir));
      if (!info) throw new LtmError('not_found', `no LTM server is running for ${projectDir} (start one with: ltm serve)`);
      const env = { LTM_PORT: String(info.port), LTM_TOKEN: info.token, LTM_MCP_URL: `${info.url}/mcp` };
      return { stdout: json ? `${JSON.stringify(env, null, 2)}\n` : Object.entries(env).map(([k, v]) => `export ${k}='${v}'\n`).join(''), stderr: '', exitCode: 0 };
    }
  } catch (error) {
    if (error instanceof UsageError) return fail(error, 2);
    if (error instanceof LtmError) return fail(error, error.code === 'invalid_input' ? 2 : 1);
    throw error;
  }
  const store = MemoryStore.open(projectDir);
  try {
    const out = await execute(command, store, values, positionals);
    store.flushCaches();
    return { stdout: `${json ? JSON.stringify(out.json, null, 2) : out.text}\n`, stderr: '', exitCode: out.exitCode ?? 0 };
  } catch (error) {
    if (error instanceof UsageError) return fail(error, 2);
    if (error instanceof LtmError) return fail(error, error.code === 'invalid_input' ? 2 : 1);
    throw error;
  } finally {
    store.dispose();
  }
}

function setupText(command: string, projectDir: string, changes: readonly Change[]): string {
  const lines = changes.filter((c) => c.action !== 'unchanged').map((c) => `  ${c.action} ${path.relative(projectDir, c.file)}`);
  if (lines.length === 0) return `Nothing to change: ${command === 'init' ? 'LTM is already set up' : 'LTM is not set up'} in ${projectDir}.`;
  const next =
    command === 'init'
      ? '\nNext: run `ltm serve` (or open the folder in VS Code with the LTM extension), then start `claude` in a terminal\nwhere LTM_PORT and LTM_TOKEN are set (the extension sets them; elsewhere: eval "$(ltm env)").'
      : '\nMemories in .claude/ltm/ were kept.';
  return `${command === 'init' ? 'Set up' : 'Removed'} LTM for Claude Code in ${projectDir}:\n${lines.join('\n')}\n${next}`;
}

/** Runs the server until SIGINT or SIGTERM, then removes server.json. */
async function serve(projectDir: string, values: Record<string, string | boolean | undefined>): Promise<CliOutput> {
  const port = integer('port', typeof values.port === 'string' ? values.port : undefined, 0);
  if (port !== undefined && port > 65535) throw new UsageError('--port must be at most 65535');
  const budget = integer('budget', typeof values.budget === 'string' ? values.budget : undefined, MIN_INJECTION_BUDGET_TOKENS);
  const store = MemoryStore.open(projectDir, { watch: true });
  const log = (message: string) => process.stderr.write(`ltm: ${message}\n`);
  let server: LtmServer;
  try {
    // Claims the project atomically: when another server runs, this throws a 'busy' error naming it.
    server = await LtmServer.start({ store, version: VERSION, preferredPort: port, injectionBudgetTokens: () => budget ?? DEFAULT_INJECTION_BUDGET_TOKENS, log });
  } catch (error) {
    store.dispose();
    throw error;
  }
  process.stdout.write(
    `LTM ${VERSION} serving ${projectDir}\n  MCP:   ${server.mcpUrl}\n  hooks: ${server.url}/hook/<event>\n` +
      `For Claude Code outside VS Code: eval "$(ltm env --project ${JSON.stringify(projectDir)})"\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.stop();
  store.flushCaches();
  store.dispose();
  return { stdout: 'LTM server stopped.\n', stderr: '', exitCode: 0 };
}

/** One line, whatever the message quotes back (a value may hold newlines). */
function fail(error: Error, exitCode: number): CliOutput {
  return { stdout: '', stderr: `ltm: ${error.message.replace(/\r?\n/g, '\\n')}\n`, exitCode };
}

interface Output {
  json: unknown;
  text: string;
  /** 0 unless said otherwise (`check` exits 1 when it finds problems, so that it can gate CI). */
  exitCode?: number;
}

async function execute(
  command: string,
  store: MemoryStore,
  values: Record<string, string | boolean | undefined>,
  [arg]: string[],
): Promise<Output> {
  const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  switch (command) {
    case 'status': {
      const status = store.status();
      return { json: responses.statusResponse(status), text: responses.statusText(status) };
    }
    case 'list': {
      const offset = integer('offset', str('offset'), 0) ?? 0;
      const result = store.list({
        phase: integer('phase', str('phase'), 0),
        tag: str('tag'),
        keyword: str('keyword'),
        limit: integer('limit', str('limit'), 1) ?? DEFAULT_LIST_LIMIT,
        offset,
      });
      return { json: responses.listResponse(result), text: responses.listText(result, offset) };
    }
    case 'recall': {
      if (values.archives && values.all) throw new UsageError('use either --archives or --all, not both');
      const scope: SearchScope = values.archives ? 'archives' : values.all ? 'all' : 'active';
      const items = store.search(arg!, { limit: integer('limit', str('limit'), 1) ?? DEFAULT_SEARCH_LIMIT, tag: str('tag'), scope });
      return { json: responses.recallResponse(items), text: responses.recallText(arg!, items) };
    }
    case 'get': {
      const memory = await store.get(arg!);
      return { json: responses.getResponse(memory), text: responses.getText(memory) };
    }
    case 'store': {
      const topic = str('topic');
      const content = str('content');
      if (topic === undefined) throw new UsageError('store needs --topic');
      if (content === undefined) throw new UsageError('store needs --content');
      const difficultyText = str('difficulty');
      let difficulty: number | undefined;
      if (difficultyText !== undefined) {
        difficulty = Number(difficultyText);
        if (difficultyText.trim() === '' || !Number.isFinite(difficulty)) {
          throw new UsageError(`--difficulty must be a number from 0 to 1 (got "${difficultyText}")`);
        }
      }
      const result = await store.store({
        topic,
        content,
        summary: str('summary'),
        tags: str('tags')?.split(',') ?? [],
        autoTag: Boolean(values['auto-tag']),
        difficulty,
      });
      return { json: responses.storeResponse(result), text: responses.storeText(result) };
    }
    case 'forget': {
      const result = await store.forget(arg!, { purge: Boolean(values.purge) });
      return { json: responses.forgetResponse(result), text: responses.forgetText(result) };
    }
    case 'restore': {
      const importance = str('importance');
      if (importance !== undefined && !isImportance(importance)) {
        throw new UsageError(`--importance must be ${IMPORTANCE_LEVELS.slice(0, -1).join(', ')} or ${IMPORTANCE_LEVELS.at(-1)} (got "${importance}")`);
      }
      const memory = await store.restore(arg!, { importance });
      return { json: responses.restoreResponse(memory), text: responses.restoreText(memory) };
    }
    case 'check': {
      const report = store.check();
      return { json: responses.checkResponse(report), text: responses.checkText(report), exitCode: report.healthy ? 0 : 1 };
    }
    case 'fix': {
      const result = await store.fix({ cleanArchives: Boolean(values['clean-archives']) });
      return { json: responses.fixResponse(result), text: responses.fixText(result) };
    }
    case 'evict': {
      const result = await store.evict();
      return { json: responses.evictResponse(result), text: responses.evictText(result) };
    }
  }
  throw new UsageError(`unknown command "${command}"`);
}

async function main(): Promise<void> {
  try {
    const out = await runCli(process.argv.slice(2));
    if (out.stdout) process.stdout.write(out.stdout);
    if (out.stderr) process.stderr.write(out.stderr);
    process.exitCode = out.exitCode;
  } catch (error) {
    process.stderr.write(`ltm: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
