/**
 * The MCP tools. Each answers with readable Markdown and, as structuredContent,
 * the response shapes in src/core/responses.ts (the same the CLI prints with --json).
 * Failures are isError results, never thrown: invalid arguments are refused
 * by the zod schemas before anything runs, and engine errors name the problem.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { describeError } from '../core/errors';
import { DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT, MEMORY_ID_FORMAT, MEMORY_ID_PATTERN } from '../core/model';
import { IMPORTANCE_LEVELS, IMPORTANCE_TAGS } from '../core/priority';
import * as responses from '../core/responses';
import type { SessionTracker } from '../core/sessions';
import type { MemoryStore } from '../core/store';
import { LIST_SORTS } from '../core/usage';

export interface McpToolContext {
  store: MemoryStore;
  sessions: SessionTracker;
  version: string;
  /** The Claude Code session that made a tool call, from the PreToolUse hook, if known. */
  sessionForToolUse: (toolUseId: string | undefined) => string | undefined;
  /**
   * Counts what recall returned after the answer went out (a server's batch of
   * uses, written in its follow-up queue), so that a search never waits for the
   * store's lock. Without it, they are counted before answering.
   */
  countRecalled?: (session: number, ids: readonly string[]) => void; // session -1: the current one
}

const memoryId = z.string().regex(MEMORY_ID_PATTERN, `must be a memory ID: ${MEMORY_ID_FORMAT}`);
const tag = z.string().trim().min(1).max(100);
const importance = z.enum(IMPORTANCE_LEVELS);

function result(text: string, structured: unknown): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured as Record<string, unknown> };
}

function failure(error: unknown): CallToolResult {
  const message = describeError(error);
  return { content: [{ type: 'text', text: `Error: ${message}` }], structuredContent: { success: false, error: message }, isError: true };
}

/** Claude Code's ID of the tool call, which the PreToolUse hook saw with its session. */
function toolUseIdOf(meta: Record<string, unknown> | undefined): string | undefined {
  return typeof meta?.['claudecode/toolUseId'] === 'string' ? (meta['claudecode/toolUseId'] as string) : undefined;
}

/** Wraps a handler so that every engine error becomes an isError result. */
function safely<A>(handler: (args: A, meta: Record<string, unknown> | undefined) => Promise<CallToolResult> | CallToolResult) {
  return async (args: A, extra: { _meta?: Record<string, unknown> }): Promise<CallToolResult> => {
    try {
      return await handler(args, extra._meta);
    } catch (error) {
      return failure(error);
    }
  };
}

/** One McpServer per MCP session (see mcpSessions.ts), and one per request of a client without a session. */
export function createMcpServer(ctx: McpToolContext): McpServer {
  const server = new McpServer(
    { name: 'ltm', title: 'LTM: long-term memory', version: ctx.version },
    {
      instructions:
        'Long-term memory for this project. Store hard-won fixes, decisions and conventions with store_memory; ' +
        'recall before re-investigating a problem. Show tool output to the user as it is.',
    },
  );
  const { store } = ctx;

  server.registerTool(
    'store_memory',
    {
      title: 'Store a memory',
      description:
        'Store a lesson worth keeping across sessions: a hard-won fix, a decision, a convention. ' +
        'Give a short topic, the full content, and optionally a one-line summary, tags and keywords (other words a later search might use) ' +
        `(${IMPORTANCE_TAGS.join(' | ')} change its priority). ` +
        'When the lesson is about specific code, give anchors (project files, each maybe with lines): the memory is then flagged as possibly outdated when that code changes. ' +
        'In a project that reviews new memories, a stored memory is used only once a person approves it.' +
        'The answer lists stored memories that say nearly the same (similar); update one of them with update_memory rather than keep duplicates.',
      inputSchema: z.object({
        topic: z.string().trim().min(1).max(10_000).describe('Brief description, e.g. "Fix flaky auth test"'),
        content: z.string().min(1).max(1_000_000).describe('The full memory: problem, cause, solution, context'),
        summary: z.string().max(2_000).optional().describe('One or two sentences; derived from the content when absent'),
        tags: z.array(tag).max(50).optional().describe('Categorisation tags'),
        auto_tag: z.boolean().optional().describe('Suggest tags from the text when none are given'),
        difficulty: z.number().min(0).max(1).optional().describe("0-1; defaults to the session's measured difficulty"),
        keywords: z.array(z.string().trim().min(1).max(100)).max(20).optional().describe('Other words a later search might use: the symptom in a user\'s words, synonyms, the error\'s name'),
        anchors: z.array(z.string().min(1).max(1_100)).max(20).optional().describe('Project files the lesson is about, relative to the project, e.g. "src/db/pool.ts#L10-24" or "src/db/pool.ts"'),
      }),
    },
    safely(async (args, meta) => {
      const sessionId = ctx.sessionForToolUse(toolUseIdOf(meta));
      // Counters of this session's earlier tool calls may still be queued for writing.
      await store.settled();
      const stored = await store.store({
        topic: args.topic,
        content: args.content,
        summary: args.summary,
        tags: args.tags,
        autoTag: args.auto_tag,
        difficulty: args.difficulty ?? ctx.sessions.difficultyFor(sessionId),
        session: ctx.sessions.sessionNumber(sessionId),
        keywords: args.keywords,
        anchors: args.anchors,
        // Held for review when the project asks for it (state.json review_new_memories).
        author: 'claude',
      });
      return result(responses.storeText(stored), responses.storeResponse(stored));
    }),
  );

  server.registerTool(
    'update_memory',
    {
      title: 'Update a memory',
      description:
        'Change a stored memory instead of storing a duplicate: give its ID and only the fields to change ' +
        '(topic, summary, content, tags; tags replace the list). The previous text is archived first and can be restored.',
      inputSchema: z.object({
        id: memoryId,
        topic: z.string().trim().min(1).max(10_000).optional().describe('New topic'),
        summary: z.string().trim().min(1).max(2_000).optional().describe('New one or two sentence summary'),
        content: z.string().min(1).max(1_000_000).optional().describe('New full content (replaces the old content)'),
        tags: z.array(tag).max(50).optional().describe('New tags (replace the old ones)'),
        anchors: z.array(z.string().min(1).max(1_100)).max(20).optional().describe('New anchors, hashed from the code as it is now (replace the old ones; [] removes them)'),
      }),
    },
    safely(async (args) => {
      const updated = await store.update(args.id, { topic: args.topic, summary: args.summary, content: args.content, tags: args.tags, anchors: args.anchors });
      return result(responses.updateText(updated), responses.updateResponse(updated));
    }),
  );

  server.registerTool(
    'recall',
    {
      title: 'Recall memories',
      description:
        'Search memories by relevance (topic, tags, keywords, summary, content; typos, prefixes and other words for the same thing tolerated), blended with priority. ' +
        'When the need can be put several ways (the error text, the symptom, the component), give the other phrasings as `also`: the rankings are fused.',
      inputSchema: z.object({
        query: z.string().trim().min(1).max(1_000).describe('Words to search for'),
        also: z.array(z.string().trim().min(1).max(1_000)).max(4).optional().describe('Other phrasings of the same need, searched too and fused with the query'),
        limit: z.number().int().min(1).max(100).optional().describe(`Most results (default ${DEFAULT_SEARCH_LIMIT})`),
        tag: tag.optional().describe('Only memories with this tag'),
        scope: z.enum(['active', 'archives', 'all']).optional().describe('active (default), archives, or all'),
      }),
    },
    safely(async (args, meta) => {
      const items = store.searchAny([args.query, ...(args.also ?? [])], { limit: args.limit ?? DEFAULT_SEARCH_LIMIT, tag: args.tag, scope: args.scope ?? 'active' });
      // What recall returns to Claude counts as recalled (usage.ts); archived results have no stats.
      const recalled = items.filter((i) => !i.archived).map((i) => i.id);
      if (recalled.length > 0) {
        const session = ctx.sessions.sessionNumber(ctx.sessionForToolUse(toolUseIdOf(meta)));
        if (ctx.countRecalled) ctx.countRecalled(session ?? -1, recalled);
        else await store.recordRecalls(recalled, session);
      }
      return result(responses.recallText(args.query, items), responses.recallResponse(items));
    }),
  );

  server.registerTool(
    'list_memories',
    {
      title: 'List memories',
      description:
        'List memories by priority (or by last use, or newest first), optionally filtered by phase (0 full, 1 hint, 2 abstract, 3 archived), tag or keyword in the topic.',
      inputSchema: z.object({
        phase: z.number().int().min(0).max(3).optional(),
        sort: z.enum(LIST_SORTS).optional().describe('priority (default), used (last read or recalled first) or created (newest first)'),
        tag: tag.optional(),
        keyword: z.string().trim().min(1).max(200).optional(),
        limit: z.number().int().min(1).max(500).optional().describe(`Default ${DEFAULT_LIST_LIMIT}`),
        offset: z.number().int().min(0).optional().describe('Default 0'),
      }),
    },
    safely((args) => {
      const listed = store.list({ phase: args.phase, tag: args.tag, keyword: args.keyword, sort: args.sort, limit: args.limit ?? DEFAULT_LIST_LIMIT, offset: args.offset ?? 0 });
      return result(responses.listText(listed, args.offset ?? 0), responses.listResponse(listed));
    }),
  );

  server.registerTool(
    'get_memory',
    {
      title: 'Get a memory',
      description: 'The full text of one memory, with how it has been used (counts as an access, which raises its priority); says when it awaits review.',
      inputSchema: z.object({ id: memoryId }),
    },
    safely(async (args) => {
      const memory = await store.get(args.id);
      const stale = store.staleness(args.id);
      return result(responses.getText(memory, stale), responses.getResponse(memory, stale));
    }),
  );

  server.registerTool(
    'forget',
    {
      title: 'Forget a memory',
      description: 'Remove a memory. Its text is kept in archives/ (restorable) unless purge is true.',
      inputSchema: z.object({ id: memoryId, purge: z.boolean().optional().describe('Delete the text for good, archive included') }),
    },
    safely(async (args) => {
      const forgotten = await store.forget(args.id, { purge: args.purge });
      return result(responses.forgetText(forgotten), responses.forgetResponse(forgotten));
    }),
  );

  server.registerTool(
    'ltm_status',
    { title: 'Memory status', description: 'Memory counts by phase, awaiting review and archived, sessions, storage size, configuration.', inputSchema: z.object({}) },
    safely(() => {
      const status = store.status();
      return result(responses.statusText(status), responses.statusResponse(status));
    }),
  );

  server.registerTool(
    'ltm_check',
    { title: 'Check integrity', description: 'Report integrity problems of the memory store; changes nothing.', inputSchema: z.object({}) },
    safely(async () => {
      await store.settleIndex();
      const report = store.check();
      return result(responses.checkText(report), responses.checkResponse(report));
    }),
  );

  server.registerTool(
    'ltm_fix',
    {
      title: 'Fix integrity',
      description:
        'Repair every integrity problem in one pass. Nothing is lost: memories index.json does not list are indexed, files that are not valid memories are moved to quarantine/, and anything removed is archived first.',
      inputSchema: z.object({
        archive_orphans: z.literal(true).optional().describe('Accepted for compatibility; always true: fix never deletes a memory'),
        clean_orphaned_archives: z.boolean().optional().describe('Delete archives that belong to no memory (default: keep them as restorable)'),
      }),
    },
    safely(async (args) => {
      const fixed = await store.fix({ cleanArchives: args.clean_orphaned_archives });
      return result(responses.fixText(fixed), responses.fixResponse(fixed));
    }),
  );

  server.registerTool(
    'search_archives',
    {
      title: 'Search archives',
      description: 'Search archived memories (evicted or forgotten) by keyword and tag.',
      inputSchema: z.object({
        query: z.string().trim().min(1).max(1_000),
        limit: z.number().int().min(1).max(100).optional(),
        tag: tag.optional(),
      }),
    },
    safely((args) => {
      const items = store.search(args.query, { limit: args.limit ?? DEFAULT_SEARCH_LIMIT, tag: args.tag, scope: 'archives' });
      return result(responses.recallText(args.query, items), responses.recallResponse(items));
    }),
  );

  server.registerTool(
    'restore_memory',
    {
      title: 'Restore a memory',
      description: 'Bring an archived or reduced memory back at phase 0 with its full original text; optionally set its importance.',
      inputSchema: z.object({ memory_id: memoryId, importance: importance.optional() }),
    },
    safely(async (args) => {
      const restored = await store.restore(args.memory_id, { importance: args.importance });
      return result(responses.restoreText(restored), responses.restoreResponse(restored));
    }),
  );

  return server;
}
