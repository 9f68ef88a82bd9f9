/**
 * Shared helpers of the store's tests (unit, server and adversarial):
 * temporary projects, byte-exact snapshots of a store's files, memory files
 * written as another process would, and a store's parts on their own.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DiskMirror, type MirrorEvents } from '../../src/core/diskMirror';
import { renderNewMemoryFile, type NewMemoryFields } from '../../src/core/memoryFile';
import { MemoryRecordCache } from '../../src/core/memoryRecords';
import { MemoryStore, initStoreFiles } from '../../src/core/store';
import { statSignature } from '../../src/core/files';
import type { MemoryStats } from '../../src/core/model';
import { journalAppliesTo, readJournalLines } from '../../src/core/statsJournal';
import { statsEntryJson, storePaths, type StorePaths } from '../../src/core/storeFiles';
import { createStoreParts, type StoreParts } from '../../src/core/storeParts';
import type { MemoryView, OpenOptions } from '../../src/core/storeTypes';
import { NO_USAGE } from '../../src/core/usage';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const FIXTURE_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'claude-ltm-0.2.5');

/** A fresh empty project directory under the OS temp dir. */
export function makeTempProject(prefix = 'ltm-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string | undefined): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

/** `<project>/.claude/ltm` */
export function ltmRoot(project: string): string {
  return path.join(project, '.claude', 'ltm');
}

/** Every regular file under `dir` (recursively), by path relative to it; none when `dir` is missing. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) out.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return out;
}

/** Every file under `dir`, by path relative to it, with its exact bytes. */
export function snapshotFiles(dir: string): Map<string, Buffer> {
  return new Map(filesUnder(dir).map((name) => [name, fs.readFileSync(path.join(dir, name))]));
}

/** Names of files that differ between two snapshots (added, removed or changed). */
export function snapshotDiff(before: Map<string, Buffer>, after: Map<string, Buffer>): string[] {
  const diff: string[] = [];
  for (const [name, bytes] of before) {
    const now = after.get(name);
    if (!now) diff.push(`removed ${name}`);
    else if (!now.equals(bytes)) diff.push(`changed ${name}`);
  }
  for (const name of after.keys()) if (!before.has(name)) diff.push(`added ${name}`);
  return diff.sort();
}

export function readJson<T = Record<string, unknown>>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

/** The keys of the `memories` map of index.json / stats.json / archive_index.json. */
export function memoryKeys(file: string): string[] {
  const data = readJson<{ memories?: Record<string, unknown> }>(file);
  return Object.keys(data.memories ?? {}).sort();
}

/**
 * stats.json's `memories` as LTM reads them: the file with its journal
 * (stats.log) applied, each entry as stats.json would hold it.
 */
export function statsOnDisk(root: string): Record<string, MemoryStats> {
  const file = path.join(root, 'stats.json');
  const memories = readJson<{ memories?: Record<string, MemoryStats> }>(file).memories ?? {};
  const journal = fs.existsSync(path.join(root, 'stats.log')) ? fs.readFileSync(path.join(root, 'stats.log'), 'utf8') : '';
  if (journalAppliesTo(journal, statSignature(file))) {
    for (const [id, entry] of readJournalLines(journal).changes) {
      if (entry) memories[id] = statsEntryJson(entry);
      else delete memories[id];
    }
  }
  return memories;
}

/** IDs of the memory files in a directory (memories/ or archives/). */
export function memoryFileIds(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => /^mem_[0-9a-f]{8}\.md$/.test(n))
    .map((n) => n.slice(0, -3))
    .sort();
}

/** Copies a directory tree. */
export function copyDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

/** Writes state.json with the given config before a store is opened. */
export function writeConfig(project: string, config: { max_memories: number; eviction_batch_size: number; memories_to_load?: number }, sessionCount = 1): void {
  const root = ltmRoot(project);
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(
    path.join(root, 'state.json'),
    `${JSON.stringify(
      {
        version: 1,
        session_count: sessionCount,
        sessions: {},
        compaction_count: 0,
        last_eviction: null,
        config: { memories_to_load: 10, ...config },
      },
      null,
      2,
    )}\n`,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Splits a memory file into its frontmatter text and body (after the closing `---` line). */
export function splitFile(raw: string): { frontmatter: string; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(raw);
  if (!m) throw new Error(`not a memory file:\n${raw}`);
  return { frontmatter: m[1]!, body: m[2]! };
}

/** The newest modification time of any file under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds dist/cli.js (`npm run build`) when it is missing or older than the sources. */
export function ensureCliBuilt(): void {
  const cli = path.join(REPO_ROOT, 'dist', 'cli.js');
  if (fs.existsSync(cli) && fs.statSync(cli).mtimeMs >= newestMtime(path.join(REPO_ROOT, 'src'))) return;
  const r = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `npm run build failed:\n${r.stdout}\n${r.stderr}`);
}

export interface ProjectContext {
  project: string;
  /** The project's .claude/ltm. */
  root: string;
  /** Opens a store on the project; it is disposed after the test. */
  open(options?: Parameters<typeof MemoryStore.open>[1]): MemoryStore;
}

/** Each test of the suite gets its own project; every store it opens is disposed afterwards. */
export function useProject(prefix = 'ltm-test-'): ProjectContext {
  const ctx = {} as ProjectContext;
  let stores: MemoryStore[] = [];
  beforeEach(() => {
    ctx.project = makeTempProject(prefix);
    ctx.root = ltmRoot(ctx.project);
    stores = [];
    ctx.open = (options) => {
      const store = MemoryStore.open(ctx.project, options);
      stores.push(store);
      return store;
    };
  });
  afterEach(() => {
    for (const store of stores) store.dispose();
    removeDir(ctx.project);
  });
  return ctx;
}

// ---------------------------------------------------------------------------
// The store's parts on their own: a DiskMirror on a real directory, and memory files written by hand.

/** The n-th memory ID of a test: `mem_00000001` and so on. */
export function testId(n: number): string {
  return `mem_${n.toString(16).padStart(8, '0')}`;
}

/** A new memory file's text (renderNewMemoryFile), with defaults for every field not given. */
export function memoryText(id: string, fields: Partial<NewMemoryFields> = {}): string {
  return renderNewMemoryFile({
    id,
    topic: `Topic of ${id}`,
    tags: [],
    phase: 0,
    difficulty: 0.5,
    created_at: '2026-01-01T00:00:00.000Z',
    created_session: 1,
    summary: `Summary of ${id}.`,
    content: `Content of ${id}.`,
    ...fields,
  });
}

/** Writes memories/<id>.md as another process would (no store involved); returns its text. */
export function writeMemory(root: string, id: string, fields: Partial<NewMemoryFields> = {}): string {
  const text = memoryText(id, fields);
  fs.mkdirSync(path.join(root, 'memories'), { recursive: true });
  fs.writeFileSync(path.join(root, 'memories', `${id}.md`), text);
  return text;
}

/** Writes archives/<id>.md as another process would; returns its text. */
export function writeArchive(root: string, id: string, fields: Partial<NewMemoryFields> = {}): string {
  const text = memoryText(id, fields);
  fs.mkdirSync(path.join(root, 'archives'), { recursive: true });
  fs.writeFileSync(path.join(root, 'archives', `${id}.md`), text);
  return text;
}

/**
 * Events a test can hook after building the mirror (the modules that listen
 * need the mirror in their constructor), each also logged as `name id?`.
 */
export interface MirrorHarness {
  mirror: DiskMirror;
  paths: StorePaths;
  /** Set these to forward the mirror's events to the modules under test. */
  on: Partial<MirrorEvents>;
  /** Every event fired, in order: `memoryChanged mem_x +` (present), `memoryChanged mem_x -` (gone), `indexChanged`, `statsRead`, `archivesChanged`. */
  log: string[];
}

/**
 * A DiskMirror on a project's store, as MemoryStore builds it (with its
 * persisted parse cache), its directories created unless `init` is false,
 * not yet refreshed.
 */
export function makeMirror(project: string, options: OpenOptions & { init?: boolean } = {}): MirrorHarness {
  const paths = storePaths(project);
  if (options.init !== false) initStoreFiles(paths);
  const on: Partial<MirrorEvents> = {};
  const log: string[] = [];
  const mirror = new DiskMirror(paths, options, new MemoryRecordCache(paths.parseCache), {
    memoryChanged: (id, next) => {
      log.push(`memoryChanged ${id} ${next ? '+' : '-'}`);
      on.memoryChanged?.(id, next);
    },
    indexChanged: () => {
      log.push('indexChanged');
      on.indexChanged?.();
    },
    statsRead: () => {
      log.push('statsRead');
      on.statsRead?.();
    },
    archivesChanged: () => {
      log.push('archivesChanged');
      on.archivesChanged?.();
    },
  });
  return { mirror, paths, on, log };
}

/**
 * A store's parts wired as MemoryStore wires them (createStoreParts), on a
 * project's store with its directories created, refreshed from the disk: what
 * the command modules are tested through. Call `parts.mirror.dispose()` after.
 */
export function makeParts(project: string, options: OpenOptions = {}): StoreParts {
  const paths = storePaths(project);
  initStoreFiles(paths);
  const parts = createStoreParts(paths, options, new MemoryRecordCache(paths.parseCache));
  parts.mirror.refresh();
  return parts;
}

/** Takes what was logged since the last call. */
export function drain(log: string[]): string[] {
  return log.splice(0, log.length);
}

/** A MemoryView built by hand for pure functions' tests: defaults for every field, `over` on top. */
export function memoryView(over: Partial<MemoryView> & Pick<MemoryView, 'id'>): MemoryView {
  return {
    topic: 'Topic',
    tags: [],
    phase: 0,
    difficulty: 0.5,
    created_at: '2026-01-01T00:00:00.000Z',
    created_session: 1,
    phase_history: [],
    keywords: [],
    anchors: [],
    summary: 'Summary.',
    content: 'Content.',
    hasSections: true,
    priority: 0.5,
    access_count: 0,
    accessed_at: '',
    last_session: 1,
    usage: { ...NO_USAGE },
    demotion_candidate: false,
    ...over,
  };
}
