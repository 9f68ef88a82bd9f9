/**
 * The commands of `ltm`, one entry each: what `ltm --help` says about it, the
 * options and arguments it takes, and what it does. src/cli.ts derives the
 * usage text, the argument parser and the dispatch from this table, so a new
 * command (or option) is one entry here and nothing else.
 */
import type { ParseArgsConfig } from 'node:util';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError } from './core/errors';
import { countOf } from './shared/wording';
import { MemoryStore, initStoreFiles, type SearchScope } from './core/store';
import * as responses from './core/responses';
import { PLAIN } from './core/textStyle';
import { initProject, uninitProject, type Change } from './servers/claudeSetup';
import { readGitSituation } from './servers/gitSituation';
import { gitRenameLookup } from './servers/gitRenames';
// The server (and the MCP SDK it loads, ~100 ms) is imported by `serve` only: every other command starts without it.
import type { LtmServer } from './servers/ltmServer';
import { runningServerInfo } from './servers/serverInfo';
import { HOOK_EVENTS, isHookEvent } from './servers/hookRoutes';
import { runHookCommand } from './servers/hookCommand';
import { PLUGIN_TOOL_PREFIX } from './shared/toolNames';
import { DEFAULT_INJECTION_BUDGET_TOKENS, MIN_INJECTION_BUDGET_TOKENS } from './core/injection';
import { contextText, previewContext } from './core/contextPreview';
import { MIN_PROMPT_BUDGET_TOKENS } from './core/promptContext';
import { DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT } from './core/model';
import { IMPORTANCE_LEVELS, isImportance } from './core/priority';
import { storePaths } from './core/storeFiles';
import { LIST_SORTS, isListSort } from './core/usage';
import { searchIndexWorkerOptions } from './servers/searchIndexWorkerScript';

/** Bad arguments: one line on stderr, exit 2. */
export class UsageError extends Error {}

export type Options = NonNullable<ParseArgsConfig['options']>;

/** What a command gets: its parsed options and positional arguments. */
export interface CommandInput {
  projectDir: string;
  /** The CLI's version (`serve` reports it). */
  version: string;
  values: Record<string, string | boolean | undefined>;
  /** As many as the command's `positionals` names, in that order. */
  positionals: string[];
}

/** What a command prints: `text`, or `json` with --json, and a newline. */
export interface Output {
  json: unknown;
  text: string;
  /** 0 unless said otherwise (`check` exits 1 when it finds problems, so that it can gate CI). */
  exitCode?: number;
  /** Print `text` even with --json (serve's last line follows the banner it wrote as text). */
  textOnly?: boolean;
  /** Print `text` exactly, with no newline added: what a hook prints is read by Claude Code. */
  raw?: boolean;
}

interface CommandHead {
  name: string;
  /** The arguments after the name, as `ltm --help` shows them ('' for none). */
  usage: string;
  /** One line for `ltm --help`. */
  description: string;
  /** parseArgs options besides the common ones (--project, --json, --help). */
  options: Options;
  /** Names of the positional arguments, in order. */
  positionals: readonly string[];
  /** The words after the command are one argument (a query needs no quotes). */
  joinPositionals?: boolean;
  /** It searches the memories: a store without a saved search index has it built on a worker thread while it opens. */
  searches?: boolean;
  /**
   * Text options that may also come from a file (`--<name>-file F`, declared
   * in `options` too) or from standard input (`--<name> -`); src/cli.ts reads
   * them before the command runs.
   */
  textInputs?: readonly string[];
}

/**
 * A command that works on the project's memories gets the store: opened
 * before it runs, its caches flushed after, disposed either way. The others
 * (setup, the server, its address) get only the project directory.
 */
export type Command = CommandHead &
  (
    | { store: true; run: (store: MemoryStore, input: CommandInput) => Promise<Output> | Output }
    | { store: false; run: (input: CommandInput) => Promise<Output> }
  );

/** The options every command accepts. */
export const COMMON_OPTIONS: Options = {
  project: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const text = { type: 'string' } as const;
const flag = { type: 'boolean' } as const;

/** In the order `ltm --help` lists them. */
export const COMMANDS: readonly Command[] = [
  {
    name: 'status',
    usage: '',
    description: 'memory counts, sessions, storage',
    options: {},
    positionals: [],
    store: true,
    run: (store) => {
      const status = store.status();
      return { json: responses.statusResponse(status), text: responses.statusText(status, PLAIN) };
    },
  },
  {
    name: 'list',
    usage: `[--sort ${LIST_SORTS.join('|')}] [--phase N] [--tag T] [--keyword K] [--status approved|proposed] [--limit N] [--offset N]`,
    description: 'memories by priority, last use or creation, with their use (--phase 3: archived; --status proposed: awaiting review)',
    options: { sort: text, phase: text, tag: text, keyword: text, status: text, limit: text, offset: text },
    positionals: [],
    store: true,
    run: (store, { values }) => {
      const offset = integer('offset', str(values, 'offset'), 0) ?? 0;
      const status = str(values, 'status');
      if (status !== undefined && status !== 'approved' && status !== 'proposed') throw new UsageError(`--status must be approved or proposed (got "${status}")`);
      const sort = str(values, 'sort');
      if (sort !== undefined && !isListSort(sort)) throw new UsageError(`--sort must be ${LIST_SORTS.slice(0, -1).join(', ')} or ${LIST_SORTS.at(-1)} (got "${sort}")`);
      const result = store.list({
        status,
        sort,
        phase: integer('phase', str(values, 'phase'), 0),
        tag: str(values, 'tag'),
        keyword: str(values, 'keyword'),
        limit: integer('limit', str(values, 'limit'), 1) ?? DEFAULT_LIST_LIMIT,
        offset,
      });
      return { json: responses.listResponse(result), text: responses.listText(result, offset, PLAIN) };
    },
  },
  {
    name: 'recall',
    usage: '<query> [--also "other words"]… [--limit N] [--tag T] [--archives | --all]',
    description: 'ranked search (active, archived or both); --also: other phrasings of the same need, fused',
    options: { limit: text, tag: text, archives: flag, all: flag, also: { type: 'string', multiple: true } },
    positionals: ['query'],
    joinPositionals: true,
    store: true,
    searches: true,
    run: (store, { values, positionals: [query] }) => {
      if (values.archives && values.all) throw new UsageError('use either --archives or --all, not both');
      const scope: SearchScope = values.archives ? 'archives' : values.all ? 'all' : 'active';
      const also = Array.isArray(values.also) ? values.also.filter((v): v is string => typeof v === 'string') : [];
      const items = store.searchAny([query!, ...also], { limit: integer('limit', str(values, 'limit'), 1) ?? DEFAULT_SEARCH_LIMIT, tag: str(values, 'tag'), scope });
      return { json: responses.recallResponse(items), text: responses.recallText(query!, items, PLAIN) };
    },
  },
  {
    name: 'context',
    usage: '[--prompt TEXT] [--error TEXT] [--file PATH] [--budget TOKENS] [--prompt-budget TOKENS]',
    description: 'what Claude Code would be given: at session start, and with a prompt, a failure or a file (counts nothing)',
    options: { prompt: text, error: text, file: text, budget: text, 'prompt-budget': text },
    positionals: [],
    store: true,
    searches: true,
    run: async (store, { values }) => {
      const budget = integer('budget', str(values, 'budget'), MIN_INJECTION_BUDGET_TOKENS) ?? DEFAULT_INJECTION_BUDGET_TOKENS;
      const promptBudget = integer('prompt-budget', str(values, 'prompt-budget'), MIN_PROMPT_BUDGET_TOKENS);
      // As a session starting now would see the project: its branch and changed files (see gitSituation.ts).
      const situation = await readGitSituation(store.paths.project);
      const preview = previewContext(store, {
        prompt: str(values, 'prompt'),
        error: str(values, 'error'),
        file: str(values, 'file'),
        budgetTokens: budget,
        promptBudgetTokens: promptBudget,
        situation,
      });
      return { json: preview, text: contextText(preview) };
    },
  },
  {
    name: 'get',
    usage: '<id>',
    description: 'a memory in full, with its use (counts as a read)',
    options: {},
    positionals: ['id'],
    store: true,
    run: async (store, { positionals: [id] }) => {
      const memory = await store.get(id!);
      const stale = store.staleness(id!);
      return { json: responses.getResponse(memory, stale), text: responses.getText(memory, stale, PLAIN) };
    },
  },
  {
    name: 'store',
    usage: '--topic T --content C|- [--summary S|-] [--tags a,b] [--keywords a,b] [--files a.ts,b.ts#L10-24] [--difficulty X] [--auto-tag]',
    description: 'store a new memory (--files: the code it is about; "-": read standard input; --content-file F: read a file)',
    options: { topic: text, content: text, 'content-file': text, summary: text, 'summary-file': text, tags: text, keywords: text, files: text, difficulty: text, 'auto-tag': flag },
    positionals: [],
    textInputs: ['content', 'summary'],
    store: true,
    searches: true,
    run: async (store, { values }) => {
      const topic = str(values, 'topic');
      const content = str(values, 'content');
      if (topic === undefined) throw new UsageError('store needs --topic');
      if (content === undefined) throw new UsageError('store needs --content (or --content-file F, or --content - to read standard input)');
      const difficultyText = str(values, 'difficulty');
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
        summary: str(values, 'summary'),
        tags: str(values, 'tags')?.split(',') ?? [],
        autoTag: Boolean(values['auto-tag']),
        difficulty,
        keywords: str(values, 'keywords')?.split(',').map((k) => k.trim()).filter(Boolean),
        anchors: fileSpecs(str(values, 'files')),
      });
      return { json: responses.storeResponse(result), text: responses.storeText(result, PLAIN) };
    },
  },
  {
    name: 'stale',
    usage: '[--label | --skip]',
    description:
      'memories whose anchored code changed or is gone, and why; moved lines and renamed files are followed and written; ' +
      '--skip/--label: leave them out of session start and offers, or give them marked "possibly outdated"',
    options: { label: flag, skip: flag },
    positionals: [],
    store: true,
    run: async (store, { values }) => {
      if (values.label && values.skip) throw new UsageError('use either --label or --skip, not both');
      if (values.label || values.skip) {
        // A project without a store gets one, as with review --on: the setting must hold for the first session.
        store.init();
        await store.setStaleMemories(values.skip ? 'skip' : 'label');
      }
      // What only moved is followed first, so that what is listed has really changed.
      const followed = await store.followAnchors();
      const stale = store.staleMemories();
      const mode = store.config.stale_memories;
      const lines = stale.length === 0 ? ['No memory is stale: every anchored memory matches its code.'] : stale.flatMap((m) => [`${m.id}  ${m.topic}`, ...m.reasons.map((r) => `  ${r}`)]);
      if (followed.length > 0) lines.push('', `Followed moved or renamed code in ${countOf(followed.length, 'memory', 'memories')}: ${followed.join(', ')}`);
      lines.push(
        '',
        mode === 'skip'
          ? 'Session start and offers leave stale memories out; recall and get still return them, marked (ltm stale --label gives them marked instead).'
          : 'Session start and offers give stale memories marked "possibly outdated" (ltm stale --skip leaves them out).',
      );
      return { json: { stale, followed, stale_memories: mode }, text: lines.join('\n') };
    },
  },
  {
    name: 'anchor',
    usage: '<id> --files a.ts,b.ts#L10-24 | --reanchor | --none',
    description: "set a memory's anchors, hash them again from the code as it is now (--reanchor: still true), or remove them",
    options: { files: text, reanchor: flag, none: flag },
    positionals: ['id'],
    store: true,
    run: async (store, { values, positionals: [id] }) => {
      const files = str(values, 'files');
      const chosen = [files !== undefined, Boolean(values.reanchor), Boolean(values.none)].filter(Boolean).length;
      if (chosen !== 1) throw new UsageError('anchor takes exactly one of --files, --reanchor, --none');
      const memory = values.reanchor ? await store.reanchor(id!) : await store.setAnchors(id!, values.none ? [] : fileSpecs(files) ?? []);
      const stale = store.staleness(id!);
      return { json: responses.getResponse(memory, stale), text: responses.getText(memory, stale, PLAIN) };
    },
  },
  {
    name: 'review',
    usage: '[--on | --off]',
    description: 'memories awaiting review, oldest first; --on/--off: hold what Claude stores for review',
    options: { on: flag, off: flag },
    positionals: [],
    store: true,
    run: async (store, { values }) => {
      if (values.on && values.off) throw new UsageError('use either --on or --off, not both');
      if (values.on || values.off) {
        // A project without a store gets one: the setting must hold for the first memory Claude stores.
        store.init();
        await store.setReviewNewMemories(Boolean(values.on));
      }
      const waiting = store.awaitingReview();
      const on = store.config.review_new_memories;
      return { json: responses.reviewResponse(waiting, on), text: responses.reviewText(waiting, on, PLAIN) };
    },
  },
  {
    name: 'approve',
    usage: '<id>',
    description: 'approve a memory awaiting review: it is used from now on',
    options: {},
    positionals: ['id'],
    store: true,
    run: async (store, { positionals: [id] }) => {
      const result = await store.approve(id!);
      return { json: responses.reviewDecisionResponse(result), text: responses.reviewDecisionText(result) };
    },
  },
  {
    name: 'reject',
    usage: '<id>',
    description: 'reject a memory awaiting review: archived with reason "rejected" (restorable)',
    options: {},
    positionals: ['id'],
    store: true,
    run: async (store, { positionals: [id] }) => {
      const result = await store.reject(id!);
      return { json: responses.reviewDecisionResponse(result), text: responses.reviewDecisionText(result) };
    },
  },
  {
    name: 'update',
    usage: '<id> [--topic T] [--summary S|-] [--content C|-] [--tags a,b]',
    description: 'change the given fields of a memory (the previous text is archived; --content-file F: read a file)',
    options: { topic: text, summary: text, 'summary-file': text, content: text, 'content-file': text, tags: text },
    positionals: ['id'],
    textInputs: ['content', 'summary'],
    store: true,
    run: async (store, { values, positionals: [id] }) => {
      const tags = str(values, 'tags');
      const result = await store.update(id!, {
        topic: str(values, 'topic'),
        summary: str(values, 'summary'),
        content: str(values, 'content'),
        tags: tags === undefined ? undefined : tags.split(',').filter((t) => t.trim()),
      });
      return { json: responses.updateResponse(result), text: responses.updateText(result, PLAIN) };
    },
  },
  {
    name: 'merge',
    usage: '<source-id> <into-id>',
    description: 'merge a memory into another (both originals are archived)',
    options: {},
    positionals: ['source', 'into'],
    store: true,
    run: async (store, { positionals: [source, into] }) => {
      const result = await store.merge(source!, into!);
      return { json: responses.mergeResponse(result), text: responses.mergeText(result, PLAIN) };
    },
  },
  {
    name: 'forget',
    usage: '<id> [--purge]',
    description: 'archive a memory (--purge: delete its text for good)',
    options: { purge: flag },
    positionals: ['id'],
    store: true,
    run: async (store, { values, positionals: [id] }) => {
      const result = await store.forget(id!, { purge: Boolean(values.purge) });
      return { json: responses.forgetResponse(result), text: responses.forgetText(result) };
    },
  },
  {
    name: 'restore',
    usage: `<id> [--importance ${IMPORTANCE_LEVELS.join('|')}]`,
    description: 'bring an archived memory back at phase 0',
    options: { importance: text },
    positionals: ['id'],
    store: true,
    run: async (store, { values, positionals: [id] }) => {
      const importance = str(values, 'importance');
      if (importance !== undefined && !isImportance(importance)) {
        throw new UsageError(`--importance must be ${IMPORTANCE_LEVELS.slice(0, -1).join(', ')} or ${IMPORTANCE_LEVELS.at(-1)} (got "${importance}")`);
      }
      const memory = await store.restore(id!, { importance });
      return { json: responses.restoreResponse(memory), text: responses.restoreText(memory, PLAIN) };
    },
  },
  {
    name: 'check',
    usage: '',
    description: 'report integrity problems (exit 1 when there are any)',
    options: {},
    positionals: [],
    store: true,
    run: async (store) => {
      // A running server may write index.json a moment after its last change: its entries are not problems.
      await store.settleIndex();
      const report = store.check();
      return { json: responses.checkResponse(report), text: responses.checkText(report, PLAIN), exitCode: report.healthy ? 0 : 1 };
    },
  },
  {
    name: 'fix',
    usage: '[--clean-archives]',
    description: 'repair them (orphaned archives are kept unless asked)',
    options: { 'clean-archives': flag },
    positionals: [],
    store: true,
    run: async (store, { values }) => {
      const result = await store.fix({ cleanArchives: Boolean(values['clean-archives']) });
      return { json: responses.fixResponse(result), text: responses.fixText(result, PLAIN) };
    },
  },
  {
    name: 'evict',
    usage: '',
    description: 'run one eviction cycle',
    options: {},
    positionals: [],
    store: true,
    run: async (store) => {
      const result = await store.evict();
      return { json: responses.evictResponse(result), text: responses.evictText(result) };
    },
  },
  {
    name: 'serve',
    usage: '[--port N] [--budget TOKENS]',
    description: 'serve MCP and the hook endpoints on 127.0.0.1',
    options: { port: text, budget: text },
    positionals: [],
    store: false,
    run: serve,
  },
  {
    name: 'mcp',
    usage: '',
    description: 'serve the MCP tools on standard input and output, for one Claude Code session (the plugin runs it)',
    options: {},
    positionals: [],
    store: false,
    run: async ({ projectDir, version, values }) => {
      // Loaded here only: the MCP SDK would slow the start of every other command.
      const { serveStdioMcp } = await import('./servers/stdioMcp');
      // Stopped by a signal (a client that does not wait for the session's end), it still writes what is
      // pending (index.json, the caches) before it exits, as when its input closes.
      const stop = stopSignals();
      try {
        await serveStdioMcp({
          projectDir: claudeProjectDir(projectDir, values),
          version,
          sessionId: process.env.CLAUDE_CODE_SESSION_ID || undefined,
          stopRequested: stop.requested,
          ...searchIndexWorkerOptions(),
        });
      } finally {
        stop.dispose();
      }
      return { json: null, text: '', raw: true };
    },
  },
  {
    name: 'hook',
    usage: `<${HOOK_EVENTS.join('|')}>`,
    description: 'a Claude Code command hook (payload on standard input): to the running server, else answered here; always exits 0',
    options: {},
    positionals: ['event'],
    store: false,
    run: async ({ projectDir, values, positionals: [event] }) => {
      // A hook never fails Claude Code, not even with an event it does not know.
      if (!isHookEvent(event!)) return { json: null, text: '', raw: true };
      let payload = '';
      try {
        payload = fs.readFileSync(0, 'utf8');
      } catch {
        payload = '';
      }
      const result = await runHookCommand({
        event,
        payload,
        projectDir: claudeProjectDir(projectDir, values),
        env: { LTM_PORT: process.env.LTM_PORT, LTM_TOKEN: process.env.LTM_TOKEN },
        toolPrefix: PLUGIN_TOOL_PREFIX,
      });
      return { json: null, text: result.stdout, raw: true };
    },
  },
  {
    name: 'env',
    usage: '',
    description: 'print export lines for a running server (eval "$(ltm env)")',
    options: {},
    positionals: [],
    store: false,
    run: async ({ projectDir }) => {
      const info = await runningServerInfo(storePaths(projectDir));
      if (!info) throw new LtmError('not_found', `no LTM server is running for ${projectDir} (start one with: ltm serve)`);
      const env = { LTM_PORT: String(info.port), LTM_TOKEN: info.token, LTM_MCP_URL: `${info.url}/mcp` };
      return { json: env, text: Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n') };
    },
  },
  {
    name: 'init',
    usage: '',
    description: 'set the project up for Claude Code (hooks, MCP, commands, CLAUDE.md)',
    options: {},
    positionals: [],
    store: false,
    run: async ({ projectDir }) => {
      const changes = initProject(projectDir);
      initStoreFiles(storePaths(projectDir));
      return { json: { success: true, changes }, text: setupText('init', projectDir, changes) };
    },
  },
  {
    name: 'uninit',
    usage: '',
    description: 'remove exactly what init added (memories are kept)',
    options: {},
    positionals: [],
    store: false,
    run: async ({ projectDir }) => {
      const changes = uninitProject(projectDir);
      return { json: { success: true, changes }, text: setupText('uninit', projectDir, changes) };
    },
  },
];

/**
 * The project Claude Code runs in: --project when given, else
 * CLAUDE_PROJECT_DIR (Claude Code sets it for hooks and MCP servers, which
 * may start in a subfolder), else the current directory.
 */
function claudeProjectDir(projectDir: string, values: CommandInput['values']): string {
  if (typeof values.project === 'string') return projectDir;
  const fromClaude = process.env.CLAUDE_PROJECT_DIR;
  return fromClaude && path.isAbsolute(fromClaude) ? fromClaude : projectDir;
}

/**
 * `--files a.ts,b.ts#L10-24` as anchor specs. A path that names a file from
 * the current directory is taken from there (people type paths from where
 * they are); otherwise it is relative to the project.
 */
function fileSpecs(files: string | undefined): string[] | undefined {
  if (files === undefined) return undefined;
  return files.split(',').map((f) => f.trim()).filter(Boolean).map((spec) => {
    const at = spec.lastIndexOf('#');
    const file = at < 0 ? spec : spec.slice(0, at);
    const fromHere = path.resolve(process.cwd(), file);
    return !path.isAbsolute(file) && fs.existsSync(fromHere) ? fromHere + (at < 0 ? '' : spec.slice(at)) : spec;
  });
}

function str(values: CommandInput['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function integer(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} must be a whole number ≥ ${min} (got "${value}")`);
  return Number(value);
}

function setupText(command: 'init' | 'uninit', projectDir: string, changes: readonly Change[]): string {
  const lines = changes.filter((c) => c.action !== 'unchanged').map((c) => `  ${c.action} ${path.relative(projectDir, c.file)}${c.note ? `: ${c.note}` : ''}`);
  if (lines.length === 0) return `Nothing to change: ${command === 'init' ? 'LTM is already set up' : 'LTM is not set up'} in ${projectDir}.`;
  const next =
    command === 'init'
      ? '\nNext: run ltm serve (or open the folder in VS Code with the LTM extension), then start claude in a terminal\nwhere LTM_PORT and LTM_TOKEN are set (the extension sets them; elsewhere: eval "$(ltm env)").'
      : '\nMemories in .claude/ltm/ were kept.';
  return `${command === 'init' ? 'Set up' : 'Removed'} LTM for Claude Code in ${projectDir}:\n${lines.join('\n')}\n${next}`;
}

/**
 * SIGINT and SIGTERM (Ctrl-C, an editor or a client stopping the process) as a promise, instead of
 * Node's default of exiting at once: a server stopped so still writes what is pending. `dispose`
 * gives the signals back to Node's default.
 */
function stopSignals(): { requested: Promise<void>; dispose(): void } {
  let onSignal = () => undefined as void;
  const requested = new Promise<void>((resolve) => (onSignal = resolve));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    requested,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** Runs the server until SIGINT or SIGTERM, then removes server.json. */
async function serve({ projectDir, version, values }: CommandInput): Promise<Output> {
  const port = integer('port', str(values, 'port'), 0);
  if (port !== undefined && port > 65535) throw new UsageError('--port must be at most 65535');
  const budget = integer('budget', str(values, 'budget'), MIN_INJECTION_BUDGET_TOKENS);
  // Listened for before the server starts: a Ctrl-C while it claims the project (server.json is
  // written by then) must stop it cleanly, not kill the process and leave server.json behind.
  const stop = stopSignals();
  const stopRequested = stop.requested;
  // Prepared, not opened: the server claims the project and listens first, then the memories are
  // read (openInSteps below). A request that needs them before that opens the store itself.
  // The memory files are statted on a worker thread from now on, while the server starts.
  const store = MemoryStore.prepare(projectDir, { watch: true, renames: gitRenameLookup(projectDir), ...searchIndexWorkerOptions() }, { sweepAhead: true });
  const log = (message: string) => process.stderr.write(`ltm: ${message}\n`);
  let server: LtmServer;
  try {
    const { LtmServer } = await import('./servers/ltmServer');
    // Claims the project atomically: when another server runs, this throws a 'busy' error naming it.
    server = await LtmServer.start({ store, version, preferredPort: port, injectionBudgetTokens: () => budget ?? DEFAULT_INJECTION_BUDGET_TOKENS, log });
  } catch (error) {
    stop.dispose();
    store.dispose();
    throw error;
  }
  // "serving" first: a client that waits for it gets on with connecting while the store opens.
  process.stdout.write(
    `LTM ${version} serving ${projectDir}\n  MCP:   ${server.mcpUrl}\n  hooks: ${server.url}/hook/<event>\n` +
      `For Claude Code outside VS Code: eval "$(ltm env --project ${JSON.stringify(projectDir)})"\n`,
  );
  // Opened once listening, in steps between which requests are answered, with the search index loaded
  // (or built) so that the first recall need not wait for it, then the memories ranked (in slices) so
  // that the first session start need not rank them; requests that waited for the opening are answered
  // before (a first session_start without caches need not wait for ~0.5 s of index building at 10,000
  // memories; a recall among them waits for the index, built on a worker when there is none to load).
  // The caches are saved in a pause between requests: after a start without them that takes ~0.3 s at
  // 50,000 memories, which the first answers (a session's hooks, the MCP handshake) should not wait for.
  let stopping = false;
  const opening = store
    // Not past a stop: a request whose client never finishes it would hold the stop until its timeout.
    .openInSteps({ beforeSearchIndex: () => Promise.race([server.requestsAnswered(), stopRequested]) })
    .then(() => {
      if (stopping) return;
      // In a pause, not while the store opens: a session start waiting for the opening needs neither
      // the MCP modules nor Node's web Request classes, and need not wait for them too (an MCP request
      // meanwhile loads them itself).
      server.inPause('MCP prepared', () => server.prepareMcp());
      server.inPause('caches saved', () => store.flushCachesInSlices());
      // For the first store (not for a stop, which runs the work in a pause at once).
      server.inPause('first store prepared', async () => {
        if (!stopping) await store.prepareForStores();
      });
    })
    .catch((error: unknown) => log(`could not open the store in the background: ${(error as Error).message}`));
  await stopRequested;
  stopping = true;
  await opening;
  await server.stop();
  store.flushCaches();
  store.dispose();
  return { json: null, text: 'LTM server stopped.', textOnly: true };
}
