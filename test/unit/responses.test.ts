import { strict as assert } from 'node:assert';
import { PROBLEM_LEVELS, type IntegrityProblem, type IntegrityReport } from '../../src/core/integrity';
import {
  checkResponse,
  checkText,
  evictResponse,
  evictText,
  fixResponse,
  fixText,
  forgetResponse,
  forgetText,
  getResponse,
  getText,
  listResponse,
  listText,
  mergeResponse,
  mergeText,
  recallResponse,
  recallText,
  restoreResponse,
  restoreText,
  statusResponse,
  statusText,
  storeResponse,
  storeText,
  updateResponse,
  updateText,
} from '../../src/core/responses';
import type { EvictionResult, MemoryView, SearchResultItem, StatusResult } from '../../src/core/store';

const MEMORY: MemoryView = {
  id: 'mem_0000abcd',
  topic: 'Postgres pool',
  tags: ['database', 'postgres'],
  phase: 0,
  difficulty: 0.7,
  created_at: '2026-11-22T06:59:15.123Z',
  created_session: 4,
  phase_history: [],
  keywords: [],
  anchors: [],
  summary: 'Raise the pool to 50.',
  content: 'The pool of 10 ran dry.\n\nRaised to 50.',
  hasSections: true,
  priority: 0.8134,
  access_count: 3,
  accessed_at: '2026-11-23T00:00:00.000Z',
  last_session: 5,
  usage: { injected_sessions: 0, offer_count: 0, recall_count: 0, read_count: 0, last_used_session: 0, last_used_at: '' },
  demotion_candidate: false,
};

const NO_USAGE_JSON = { injected_sessions: 0, offer_count: 0, recall_count: 0, read_count: 0, last_used_session: 0, last_used_at: '' };

const HINT: MemoryView = { ...MEMORY, id: 'mem_00000002', topic: 'Venv', tags: [], phase: 1, priority: 0.5, difficulty: 0, summary: 'Use .venv.', content: 'Tools look there first.' };

const item = (over: Partial<SearchResultItem>): SearchResultItem => ({
  id: MEMORY.id,
  topic: MEMORY.topic,
  summary: MEMORY.summary,
  tags: MEMORY.tags,
  phase: 0,
  priority: 0.8134,
  score: 0.5,
  archived: false,
  ...over,
});

const STATUS: StatusResult = {
  total_memories: 12,
  awaiting_review: 0,
  by_phase: { full: 9, hint: 2, abstract: 1 },
  total_archived: 4,
  session_count: 31,
  last_eviction: '2026-11-20T10:00:00.000Z',
  storage_size_bytes: 1536,
  config: { max_memories: 100, memories_to_load: 10, eviction_batch_size: 5, review_new_memories: false, stale_memories: 'label' },
  store_path: '/work/project/.claude/ltm',
  exists: true,
  invalid_files: 0,
  stale_memories: 0,
  demotion_candidates: 0,
};

const COUNTS = { indexed_memories: 1, memory_files: 2, stats_entries: 3, archive_files: 4, archived_memories: 5 };
const problem = (kind: IntegrityProblem['kind'], detail: string): IntegrityProblem => ({ kind, level: PROBLEM_LEVELS[kind], detail });

describe('responses', () => {
  describe('store', () => {
    it('storeResponse: {success, id, message, topic, tags, difficulty, summary, redacted, similar}', () => {
      const redactions = [{ kind: 'AWS access key', count: 1 }];
      const r = storeResponse({ memory: MEMORY, redactions });
      assert.deepEqual(Object.keys(r), ['success', 'id', 'message', 'topic', 'tags', 'difficulty', 'summary', 'redacted', 'status', 'similar']);
      assert.deepEqual(r, {
        success: true,
        id: 'mem_0000abcd',
        message: 'Memory stored with ID mem_0000abcd',
        topic: 'Postgres pool',
        tags: ['database', 'postgres'],
        difficulty: 0.7,
        summary: 'Raise the pool to 50.',
        redacted: redactions,
        status: 'approved',
        similar: [],
      });
    });

    it('storeResponse and storeText of a memory awaiting review say so, as facts', () => {
      const proposed = { memory: { ...MEMORY, status: 'proposed' as const }, redactions: [] };
      const r = storeResponse(proposed);
      assert.equal(r.status, 'proposed');
      assert.equal(r.message, 'Memory stored with ID mem_0000abcd; it awaits review by a person before it is used');
      const text = storeText(proposed);
      assert.match(text, /awaits review by a person, and until it is approved it is not injected into sessions, offered with prompts or returned by recall\.$/);
      assert.doesNotMatch(text, /\b(must|do not|never|please)\b/i, 'facts, not orders');
      assert.doesNotMatch(storeText({ memory: MEMORY, redactions: [] }), /review/);
    });

    it('store answers name similar memories and say how to keep one', () => {
      const similar = [{ id: 'mem_0000beef', topic: 'Batch jobs\nstarve the pool', score: 0.512 }];
      assert.deepEqual(storeResponse({ memory: MEMORY, redactions: [], similar }).similar, similar);
      assert.equal(
        storeText({ memory: MEMORY, redactions: [], similar }),
        'Stored memory **Postgres pool** (ID: `mem_0000abcd`)\nTags: database, postgres | Difficulty: 0.70\n\n' +
          'Similar memory already stored (possible duplicate):\n- **Batch jobs starve the pool** (ID: `mem_0000beef`, similarity 0.51)\n' +
          'If one of them is the same lesson, keep one memory: update it with update_memory (id, and the fields to change) and forget `mem_0000abcd`, ' +
          'or merge the two (`ltm merge mem_0000abcd <id>`). Both keep their previous text in archives/.',
      );
    });

    it('update and merge answers say what changed and where the previous text is', () => {
      const updated = { memory: MEMORY, changed: ['content', 'tags'], redactions: [], versions: ['mem_00001111'] };
      assert.deepEqual(updateResponse(updated), {
        success: true,
        id: 'mem_0000abcd',
        message: 'Memory mem_0000abcd updated (content, tags)',
        changed: ['content', 'tags'],
        topic: 'Postgres pool',
        tags: ['database', 'postgres'],
        summary: 'Raise the pool to 50.',
        phase: MEMORY.phase,
        archived_versions: ['mem_00001111'],
        redacted: [],
      });
      assert.equal(updateText(updated), 'Updated **Postgres pool** (ID: `mem_0000abcd`): content, tags.\nThe previous text is archived as `mem_00001111` (restorable).');
      assert.equal(updateText({ ...updated, changed: [], versions: [] }), '**Postgres pool** (ID: `mem_0000abcd`) already says that: nothing changed.');
      const merged = { target: MEMORY, source: { id: 'mem_0000beef', topic: 'Batch jobs' }, versions: ['mem_00002222'] };
      assert.equal(mergeResponse(merged).message, 'Memory mem_0000beef merged into mem_0000abcd');
      assert.equal(
        mergeText(merged),
        'Merged **Batch jobs** (`mem_0000beef`) into **Postgres pool** (`mem_0000abcd`).\n`mem_0000beef` is archived (restorable); the previous text of `mem_0000abcd` is archived as `mem_00002222`.',
      );
    });

    it('storeText: topic, ID, tags and difficulty; "(none)" without tags; what was redacted, counted', () => {
      assert.equal(storeText({ memory: MEMORY, redactions: [] }), 'Stored memory **Postgres pool** (ID: `mem_0000abcd`)\nTags: database, postgres | Difficulty: 0.70');
      assert.equal(
        storeText({ memory: { ...MEMORY, tags: [], difficulty: 0.125 }, redactions: [{ kind: 'AWS access key', count: 1 }, { kind: 'GitHub token', count: 2 }] }),
        'Stored memory **Postgres pool** (ID: `mem_0000abcd`)\nTags: (none) | Difficulty: 0.13\nSecrets were removed before saving: AWS access key, 2× GitHub token.',
      );
    });
  });

  describe('recall', () => {
    it('recallResponse: {memories[{id, topic, summary, priority, phase, tags, archived, score}], total}, score rounded to 3 decimals', () => {
      const r = recallResponse([item({ score: 0.123456 }), item({ id: 'mem_0000dcba', archived: true, phase: 3, tags: [], score: 0.99951 })]);
      assert.deepEqual(Object.keys(r), ['memories', 'total']);
      assert.equal(r.total, 2);
      assert.deepEqual(Object.keys(r.memories[0]!), ['id', 'topic', 'summary', 'priority', 'phase', 'tags', 'archived', 'score']);
      assert.deepEqual(r.memories[0], { id: 'mem_0000abcd', topic: 'Postgres pool', summary: 'Raise the pool to 50.', priority: 0.8134, phase: 0, tags: ['database', 'postgres'], archived: false, score: 0.123 });
      assert.equal(r.memories[1]!.score, 1);
      assert.equal(r.memories[1]!.archived, true);
      assert.deepEqual(recallResponse([]), { memories: [], total: 0 });
    });

    it('recallText: one block per hit, archived marked, phase by name, the summary on one line', () => {
      const text = recallText('pool', [
        item({ summary: 'Raise the pool\n\nto   50.' }),
        item({ id: 'mem_0000dcba', topic: 'Old pool', tags: [], phase: 3, priority: 0, archived: true, summary: 'Was 10.' }),
      ]);
      assert.equal(
        text,
        [
          'Found 2 memories matching "pool":',
          '',
          '**Postgres pool** (ID: `mem_0000abcd`)',
          'Tags: database, postgres | Priority: 0.81 | Phase: Full',
          'Summary: Raise the pool to 50.',
          '',
          '**Old pool** (ID: `mem_0000dcba`) — archived',
          'Tags: (none) | Priority: 0.00 | Phase: Archived',
          'Summary: Was 10.',
        ].join('\n'),
      );
    });

    it('recallText: bounds a long summary to 300 characters and names phases it knows, numbers otherwise', () => {
      const long = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
      const text = recallText('w', [item({ summary: long, phase: 1 }), item({ phase: 2 }), item({ phase: 7 })]);
      const summaries = text.split('\n').filter((l) => l.startsWith('Summary: '));
      assert.ok(summaries[0]!.length <= 'Summary: '.length + 300 && summaries[0]!.endsWith('…'), summaries[0]);
      assert.ok(long.startsWith(summaries[0]!.slice('Summary: '.length, -1)));
      assert.deepEqual(
        text.split('\n').filter((l) => l.startsWith('Tags: ')).map((l) => l.split(' | Phase: ')[1]),
        ['Hint', 'Abstract', '7'],
      );
    });

    it('recallText: says "1 memory" for one hit, and quotes the query as given', () => {
      assert.match(recallText('a "quoted" query', [item({})]), /^Found 1 memory matching "a "quoted" query":\n\n/);
      assert.equal(recallText('*nothing*', []), 'No memories match "*nothing*".');
    });
  });

  describe('list', () => {
    it('listResponse: {memories[{id, topic, phase, priority, tags, created_at, accessed_at, usage, demotion_candidate}], total, has_more}, no text of the memories', () => {
      const r = listResponse({ memories: [MEMORY], total: 3, has_more: true });
      assert.deepEqual(Object.keys(r), ['memories', 'total', 'has_more']);
      assert.deepEqual(r.memories, [
        {
          id: 'mem_0000abcd',
          topic: 'Postgres pool',
          phase: 0,
          priority: 0.8134,
          tags: ['database', 'postgres'],
          created_at: '2026-11-22T06:59:15.123Z',
          accessed_at: '2026-11-23T00:00:00.000Z',
          usage: NO_USAGE_JSON,
          demotion_candidate: false,
        },
      ]);
      assert.deepEqual([r.total, r.has_more], [3, true]);
    });

    it('listText: one item a memory, and the next offset when there are more', () => {
      assert.equal(
        listText({ memories: [MEMORY, HINT], total: 5, has_more: true }, 2),
        [
          'Showing 2 of 5 memories:',
          '',
          '- **Postgres pool** (ID: `mem_0000abcd`)',
          '  Tags: database, postgres | Phase: Full | Priority: 0.81 | Used: injected 0 sessions, read 0, recalled 0, last used never',
          '- **Venv** (ID: `mem_00000002`)',
          '  Tags: (none) | Phase: Hint | Priority: 0.50 | Used: injected 0 sessions, read 0, recalled 0, last used never',
          '',
          'More: use offset 4.',
        ].join('\n'),
      );
      assert.equal(listText({ memories: [HINT], total: 3, has_more: false }, 2), 'Showing 1 of 3 memories:\n\n- **Venv** (ID: `mem_00000002`)\n  Tags: (none) | Phase: Hint | Priority: 0.50 | Used: injected 0 sessions, read 0, recalled 0, last used never');
      assert.ok(listText({ memories: [MEMORY], total: 9, has_more: true }).endsWith('\n\nMore: use offset 1.'), 'offset defaults to 0');
      assert.equal(listText({ memories: [], total: 0, has_more: false }), 'No memories found.');
    });
  });

  describe('get', () => {
    it('getResponse: every field of the design, and nothing internal (hasSections, phase_history)', () => {
      const r = getResponse({ ...MEMORY, phase_history: [{ phase: 1, at: 'x', event: 'evicted' }] });
      assert.deepEqual(Object.keys(r), ['id', 'topic', 'summary', 'content', 'tags', 'phase', 'priority', 'difficulty', 'access_count', 'created_at', 'accessed_at', 'created_session', 'last_session', 'keywords', 'anchors', 'stale', 'stale_reasons', 'status', 'usage', 'demotion_candidate']);
      assert.deepEqual(r, {
        id: 'mem_0000abcd',
        topic: 'Postgres pool',
        summary: 'Raise the pool to 50.',
        content: 'The pool of 10 ran dry.\n\nRaised to 50.',
        tags: ['database', 'postgres'],
        phase: 0,
        priority: 0.8134,
        difficulty: 0.7,
        access_count: 3,
        created_at: '2026-11-22T06:59:15.123Z',
        accessed_at: '2026-11-23T00:00:00.000Z',
        created_session: 4,
        last_session: 5,
        keywords: [],
        anchors: [],
        stale: false,
        stale_reasons: [],
        status: 'approved',
        usage: NO_USAGE_JSON,
        demotion_candidate: false,
      });
      assert.match(getText({ ...MEMORY, status: 'proposed' }), /\n\*\*Status:\*\* proposed: awaiting review by a person; until it is approved it is not injected/);
      assert.doesNotMatch(getText(MEMORY), /Status/);
      assert.equal(getResponse({ ...MEMORY, created_session: null }).created_session, null);
    });

    it('getText: the memory as a Markdown page; a reduced one says how to restore it', () => {
      const full = [
        '# Postgres pool',
        '',
        '**ID:** mem_0000abcd',
        '**Tags:** database, postgres',
        '**Phase:** 0 (Full)',
        '**Priority:** 0.81',
        '**Difficulty:** 0.70',
        '**Accesses:** 3',
        '**Created:** 2026-11-22T06:59:15.123Z',
        '**Usage:** injected in 0 sessions, never read, never recalled, last used never',
        '',
        '## Summary',
        'Raise the pool to 50.',
        '',
        '## Content',
        'The pool of 10 ran dry.\n\nRaised to 50.',
      ].join('\n');
      assert.equal(getText(MEMORY), full);
      const hint = getText(HINT);
      assert.match(hint, /^# Venv\n\n\*\*ID:\*\* mem_00000002\n\*\*Tags:\*\* \(none\)\n\*\*Phase:\*\* 1 \(Hint\)\n/);
      assert.ok(hint.endsWith('## Content\nTools look there first.\n\n*Reduced by eviction; the full text is archived (restore with `restore mem_00000002`).*'), hint);
      assert.ok(getText({ ...HINT, phase: 2 }).includes('**Phase:** 2 (Abstract)'));
    });

    it('getText: Summary and Content are the memory’s Markdown, put in verbatim', () => {
      const content = '### Problem\n```sh\nnpm ci\n```\n\n> **note** <b>html</b>';
      const text = getText({ ...MEMORY, topic: 'Use `npm ci` *always*', summary: 'Use `npm ci`.', content });
      assert.ok(text.startsWith('# Use `npm ci` *always*\n'));
      assert.ok(text.endsWith(`## Summary\nUse \`npm ci\`.\n\n## Content\n${content}`));
    });
  });

  describe('forget / restore', () => {
    it('forgetResponse: archived, or purged for good; forgetText is the message as a sentence', () => {
      const archived = forgetResponse({ id: 'mem_0000abcd', topic: 'x', archived: true, purged: false });
      assert.deepEqual(archived, { success: true, message: 'Memory mem_0000abcd was forgotten; its text is kept in archives/ and can be restored', archived: true, purged: false });
      const purged = forgetResponse({ id: 'mem_0000abcd', topic: 'x', archived: false, purged: true });
      assert.deepEqual(purged, { success: true, message: 'Memory mem_0000abcd and its archive were deleted for good', archived: false, purged: true });
      assert.equal(forgetText({ id: 'mem_0000abcd', topic: 'x', archived: false, purged: true }), 'Memory mem_0000abcd and its archive were deleted for good.');
    });

    it('restoreResponse: {success, id, message, topic, phase, tags}', () => {
      const r = restoreResponse(MEMORY);
      assert.deepEqual(Object.keys(r), ['success', 'id', 'message', 'topic', 'phase', 'tags']);
      assert.deepEqual(r, { success: true, id: 'mem_0000abcd', message: 'Memory mem_0000abcd restored at phase 0', topic: 'Postgres pool', phase: 0, tags: ['database', 'postgres'] });
      assert.equal(restoreText(MEMORY), 'Restored **Postgres pool** (ID: `mem_0000abcd`) with its full text, at phase 0.');
    });
  });

  describe('status', () => {
    it('statusResponse: the design’s fields and config, not the text-only ones (exists, invalid_files)', () => {
      const r = statusResponse(STATUS);
      assert.deepEqual(Object.keys(r), ['total_memories', 'by_phase', 'total_archived', 'session_count', 'last_eviction', 'storage_size_bytes', 'config', 'store_path', 'stale_memories', 'awaiting_review', 'demotion_candidates']);
      assert.deepEqual(r.config, { max_memories: 100, memories_to_load: 10, eviction_batch_size: 5, review_new_memories: false, stale_memories: 'label' });
      assert.equal(r.store_path, '/work/project/.claude/ltm');
    });

    it('statusText: every count, the config and the store path', () => {
      assert.equal(
        statusText(STATUS),
        [
          '# LTM Status',
          '',
          '**Memories:** 12 (Full 9, Hint 2, Abstract 1)',
          '**Archived:** 4',
          '**Sessions:** 31',
          '**Last eviction:** 2026-11-20T10:00:00.000Z',
          '**Storage:** 1.5 KB',
          '**Config:** max 100 memories, load 10 per session, evict 5 per cycle, review new memories off, stale memories labelled',
          '**Store:** `/work/project/.claude/ltm`',
        ].join('\n'),
      );
      const reviewing = statusText({ ...STATUS, awaiting_review: 2, config: { ...STATUS.config, review_new_memories: true } });
      assert.match(reviewing, /\n\*\*Awaiting review:\*\* 2 \(not used until a person approves them: ltm review\)\n\*\*Config:\*\* .*, review new memories on, stale memories labelled\n/);
      // What session start and offers do with stale memories: the project's choice, said.
      assert.match(statusText({ ...STATUS, config: { ...STATUS.config, stale_memories: 'skip' } }), /\n\*\*Config:\*\* .*, stale memories skipped\n/);
    });

    it('statusText: "never" without an eviction, a warning for unreadable files, and no store yet', () => {
      const text = statusText({ ...STATUS, last_eviction: null, invalid_files: 2 });
      assert.ok(text.includes('\n**Last eviction:** never\n'));
      assert.ok(text.includes('\n**Warning:** 2 unreadable files in memories/; run check.\n**Store:** '));
      assert.equal(statusText({ ...STATUS, exists: false }), 'No memory store yet at /work/project/.claude/ltm.');
    });

    it('statusText: sizes in B below 1 KiB, KB below 1 MiB, MB above, one decimal', () => {
      const size = (bytes: number) => /\*\*Storage:\*\* (.*)\n/.exec(statusText({ ...STATUS, storage_size_bytes: bytes }))![1];
      assert.deepEqual(
        [0, 1023, 1024, 1536, 10 * 1024 - 1, 1024 * 1024, 5.25 * 1024 * 1024, 3 * 1024 ** 3].map(size),
        ['0 B', '1023 B', '1.0 KB', '1.5 KB', '10.0 KB', '1.0 MB', '5.3 MB', '3072.0 MB'],
      );
    });
  });

  describe('check / fix', () => {
    it('checkResponse: {healthy, problems, counts}', () => {
      const report: IntegrityReport = { healthy: false, problems: [{ kind: 'orphaned_stats', level: 'error', id: 'mem_00000009', detail: 'd' }], counts: COUNTS };
      assert.deepEqual(checkResponse(report), { healthy: false, problems: report.problems, counts: COUNTS });
      assert.deepEqual(Object.keys(checkResponse(report)), ['healthy', 'problems', 'counts']);
    });

    it('checkText: healthy, with the counts', () => {
      assert.equal(
        checkText({ healthy: true, problems: [], counts: COUNTS }),
        '# LTM Integrity Check\n\n**Status: Healthy**: no integrity issues found.\n\nIndexed memories: 1 | Memory files: 2 | Stats entries: 3 | Archive files: 4 | Archived memories: 5',
      );
    });

    it('checkText: problems grouped by kind under their titles, in the order first found, then how to repair', () => {
      const report: IntegrityReport = {
        healthy: false,
        problems: [problem('not_indexed', 'A is not indexed'), problem('orphaned_stats', 'B has stats'), problem('not_indexed', 'C is not indexed')],
        counts: COUNTS,
      };
      assert.equal(
        checkText(report),
        [
          '# LTM Integrity Check',
          '',
          '**Status: 3 issues found**',
          '',
          'Indexed memories: 1 | Memory files: 2 | Stats entries: 3 | Archive files: 4 | Archived memories: 5',
          '',
          '## Memories index.json does not list yet',
          '- A is not indexed',
          '- C is not indexed',
          '',
          '## Stats entries for no memory',
          '- B has stats',
          '',
          'Run fix to repair these issues (nothing is deleted: memories are indexed, invalid files quarantined, removed text archived first).',
        ].join('\n'),
      );
    });

    it('checkText: warnings are counted apart, titled as warnings, and left for a person; alone they leave the store healthy', () => {
      const warning = problem('unreadable_anchor', 'mem_00000001: anchors[0] is left out: anchors[0] must have path and hash');
      const healthy = checkText({ healthy: true, problems: [warning], counts: COUNTS });
      assert.equal(
        healthy,
        [
          '# LTM Integrity Check',
          '',
          '**Status: Healthy**, with 1 warning',
          '',
          'Indexed memories: 1 | Memory files: 2 | Stats entries: 3 | Archive files: 4 | Archived memories: 5',
          '',
          '## Warning: Anchors entries that could not be read (left out; the text is kept for you to correct)',
          '- mem_00000001: anchors[0] is left out: anchors[0] must have path and hash',
          '',
          'Warnings are yours to correct in the memory files: fix leaves them as they are.',
        ].join('\n'),
      );
      const both = checkText({ healthy: false, problems: [problem('temp_file', 't'), warning], counts: COUNTS });
      assert.match(both, /\*\*Status: 1 issue found\*\*, with 1 warning\n/);
      assert.match(both, /\nRun fix to repair these issues .*\n\nWarnings are yours to correct/);
      assert.equal(
        fixText({ actions: [], report: { healthy: true, problems: [warning], counts: COUNTS } }),
        '# LTM Integrity Fix\n\nNothing to repair.\n\n**The store is healthy.** 1 warning is left for you to correct (check lists them).',
      );
      assert.match(fixText({ actions: ['a'], report: { healthy: false, problems: [problem('temp_file', 't'), warning], counts: COUNTS } }), /\*\*1 issue remains\.\*\* 1 warning is/);
    });

    it('fixResponse: {success, actions, healthy, problems}, success only when the store is healthy afterwards', () => {
      const remaining = [problem('temp_file', 'x.ltm-tmp')];
      assert.deepEqual(fixResponse({ actions: ['did a'], report: { healthy: false, problems: remaining, counts: COUNTS } }), { success: false, actions: ['did a'], healthy: false, problems: remaining });
      assert.deepEqual(fixResponse({ actions: [], report: { healthy: true, problems: [], counts: COUNTS } }), { success: true, actions: [], healthy: true, problems: [] });
    });

    it('fixText: each action, then whether issues remain', () => {
      assert.equal(
        fixText({ actions: ['Indexed mem_00000001', 'Quarantined bad.md'], report: { healthy: false, problems: [problem('temp_file', 't')], counts: COUNTS } }),
        '# LTM Integrity Fix\n\n- Indexed mem_00000001\n- Quarantined bad.md\n\n**1 issue remains.**',
      );
      assert.equal(fixText({ actions: ['Indexed mem_00000001'], report: { healthy: true, problems: [], counts: COUNTS } }), '# LTM Integrity Fix\n\n- Indexed mem_00000001\n\n**The store is healthy.**');
    });
  });

  describe('evict', () => {
    const ran: EvictionResult = {
      ran: true,
      before: 12,
      after: 11,
      max_memories: 10,
      steps: [
        { id: 'mem_00000001', topic: 'First', from: 0, to: 1 },
        { id: 'mem_00000002', topic: 'Second', from: 2, to: 3 },
      ],
    };

    it('evictResponse is the eviction result itself', () => {
      assert.deepEqual(evictResponse(ran), { ran: true, before: 12, after: 11, max_memories: 10, steps: ran.steps });
    });

    it('evictText: each step as "ID from → to: topic", with the counts before and after', () => {
      assert.equal(
        evictText(ran),
        'Eviction cycle: 2 memories advanced (12 → 11 in memories/, limit 10).\n\n- mem_00000001 Full → Hint: First\n- mem_00000002 Abstract → Archived: Second',
      );
      assert.ok(evictText({ ...ran, steps: ran.steps.slice(0, 1), after: 12 }).startsWith('Eviction cycle: 1 memory advanced (12 → 12 in memories/, limit 10).\n\n'));
      assert.equal(evictText({ ran: false, before: 7, after: 7, max_memories: 10, steps: [] }), 'No eviction needed: 7 memories, limit 10.');
    });
  });

  describe('a topic with line breaks', () => {
    // Stored through MCP or the CLI, a topic may hold newlines: shown as written, it could fake list
    // entries or headings in the text Claude and people read.
    const topic = 'Pool size\n- **Fake entry** (ID: `mem_deadbeef`)\n# Fake heading';
    const m: MemoryView = { ...MEMORY, topic };
    const flat = 'Pool size - **Fake entry** (ID: `mem_deadbeef`) # Fake heading';
    const texts: [string, string][] = [
      ['store', storeText({ memory: m, redactions: [] })],
      ['recall', recallText('pool', [item({ topic })])],
      ['list', listText({ memories: [m], total: 1, has_more: false })],
      ['get', getText(m)],
      ['restore', restoreText(m)],
      ['evict', evictText({ ran: true, before: 2, after: 2, max_memories: 1, steps: [{ id: m.id, topic, from: 0, to: 1 }] })],
    ];
    for (const [name, text] of texts) {
      it(`${name}: the topic stays on one line`, () => {
        assert.ok(text.includes(flat), text);
        assert.doesNotMatch(text, /^- \*\*Fake entry|^# Fake heading/m, text);
      });
    }
  });
});
