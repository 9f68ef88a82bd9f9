/**
 * Creates a sample project whose `.claude/ltm/` holds memories in every phase
 * (full, hint, abstract, archived), with tags and importance marks, and a
 * source file (src/db/pool.ts) that one of them is anchored to, made by the
 * engine itself: the demo opens it in VS Code and the UI test drives it.
 *
 *   node --import tsx scripts/sample-project.ts <dir>
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../src/core/store';
import { initProject } from '../src/servers/claudeSetup';

interface Sample {
  topic: string;
  summary: string;
  content: string;
  tags: string[];
  difficulty: number;
  /** Lines of SAMPLE_SOURCES the memory is about (`path#Lstart-end`). */
  anchors?: string[];
}

/** The project's own code, which some memories are anchored to. */
export const SAMPLE_SOURCES: Readonly<Record<string, string>> = {
  'src/db/pool.ts': [
    "import { Pool, type PoolClient } from 'pg';",
    '',
    'export const pool = new Pool({',
    '  max: 50,',
    '  connectionTimeoutMillis: 60_000,',
    '});',
    '',
    '/** Runs `work` with a client that is always released, even when it throws. */',
    'export async function withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {',
    '  const client = await pool.connect();',
    '  try {',
    '    return await work(client);',
    '  } finally {',
    '    client.release();',
    '  }',
    '}',
    '',
  ].join('\n'),
};

/** The lines of src/db/pool.ts that the Postgres memory is anchored to: the pool's settings. */
export const SAMPLE_POOL_ANCHOR = { file: 'src/db/pool.ts', lines: [3, 6] as const };

export const SAMPLE_MEMORIES: readonly Sample[] = [
  {
    topic: 'Hook scripts must call 127.0.0.1, not localhost',
    summary: 'curl to localhost resolved to ::1 while the server listened on IPv4 only; hooks failed with connection resets.',
    content:
      '### Problem\nHooks timed out on some machines: `curl http://localhost:PORT` tried ::1 first and the server only bound 127.0.0.1.\n\n### Fix\nAlways use 127.0.0.1 in hook scripts and in `.mcp.json`.\n\n### Where\nhooks/ltm-hook.sh, src/servers/ltmServer.ts',
    tags: ['networking', 'hooks', 'importance:critical'],
    difficulty: 0.8,
  },
  {
    topic: 'Postgres pool exhaustion under batch jobs',
    summary: 'A pool of 10 ran dry when batch jobs held connections; raised to 50 with a 60 s timeout and released clients in finally blocks.',
    content:
      '### Problem\nBatch jobs opened connections faster than they returned them; requests queued, then timed out.\n\n### Solution\nPool size 50, acquire timeout 60 s, and every client released in a `finally` block (see src/db/pool.ts).\n\n### How we found it\n`SELECT count(*) FROM pg_stat_activity` during a batch run showed 10 idle-in-transaction connections.',
    tags: ['database', 'postgres', 'debugging'],
    difficulty: 0.7,
    anchors: [`${SAMPLE_POOL_ANCHOR.file}#L${SAMPLE_POOL_ANCHOR.lines[0]}-${SAMPLE_POOL_ANCHOR.lines[1]}`],
  },
  {
    topic: 'Run mocha with TypeScript through tsx',
    summary: 'Mocha 12 loads .ts specs with node-option import=tsx in .mocharc.json; ts-node is not needed.',
    content: 'Add `"node-option": ["import=tsx"]` and `"extension": ["ts"]` to .mocharc.json.\n\nSpawned helper scripts need `node --import tsx` too.',
    tags: ['testing', 'typescript'],
    difficulty: 0.4,
  },
  {
    topic: 'Release checklist: tag, changelog, vsix',
    summary: 'Bump the version, update CHANGELOG.md, build with --production, package the vsix and check its size.',
    content: '1. npm version minor\n2. CHANGELOG.md entry\n3. node esbuild.mjs --production\n4. npx vsce package --no-dependencies\n5. the .vsix must stay under 2 MB',
    tags: ['release', 'conventions', 'importance:important'],
    difficulty: 0.3,
  },
  {
    topic: 'Prefer ruff over flake8',
    summary: 'Team convention: ruff for linting and formatting, line length 100.',
    content: 'ruff replaces flake8, isort and black here.\n\nConfigured in pyproject.toml under [tool.ruff].',
    tags: ['conventions', 'python', 'importance:low'],
    difficulty: 0.1,
  },
  {
    topic: 'Flaky e2e test: wait for the tree, not for a timeout',
    summary: 'The UI test was flaky because it slept 2 s; waiting for the tree row to appear made it stable.',
    content: 'Replace `waitForTimeout` with `locator.waitFor()` on the row that should appear.\n\nTimeouts hide races; waiting for a condition fixes them.',
    tags: ['testing', 'e2e'],
    difficulty: 0.6,
  },
  {
    topic: 'Windows paths in the hook command',
    summary: 'Claude Code on Windows runs hooks through Git Bash, so $CLAUDE_PROJECT_DIR works in the command.',
    content: 'The PowerShell twin of the hook script is hooks/ltm-hook.ps1.\n\nQuote the path: projects live under "C:\\Users\\Some Name".',
    tags: ['windows', 'hooks'],
    difficulty: 0.2,
  },
  {
    topic: 'Old: the API used to return 500 on empty bodies',
    summary: 'Fixed in v2: empty bodies now get 400 with a message naming the problem.',
    content: 'Kept for history: clients may still retry on 500 from old servers.',
    tags: ['api', 'history'],
    difficulty: 0.05,
  },
];

/** Builds the sample store; returns the IDs in SAMPLE_MEMORIES order. */
export async function createSampleProject(dir: string): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'README.md'), '# Sample project\n\nA project whose Claude Code sessions left some memories in .claude/ltm/.\n');
  // Written before the memories: an anchor hashes the lines it names.
  for (const [file, text] of Object.entries(SAMPLE_SOURCES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  initProject(dir);
  const store = MemoryStore.open(dir);
  store.init();
  const ids: string[] = [];
  for (const sample of SAMPLE_MEMORIES) ids.push((await store.store({ ...sample })).memory.id);
  // Some sessions pass and eviction runs: the four lowest-priority memories
  // become hints, three of them abstracts, two of them archived.
  await store.updateState((state) => {
    state.session_count = 6;
  });
  await store.recordAccesses(ids.slice(0, 4));
  for (const batch of [4, 3, 2]) {
    await store.updateState((state) => {
      state.config = { ...state.config, max_memories: 5, eviction_batch_size: batch };
    });
    await store.evict();
  }
  await store.updateState((state) => {
    state.config = { ...state.config, max_memories: 100, eviction_batch_size: 10 };
  });
  store.flushCaches();
  store.dispose();
  return ids;
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: node --import tsx scripts/sample-project.ts <dir>\n');
    process.exit(2);
  }
  void createSampleProject(path.resolve(dir)).then((ids) => {
    const store = MemoryStore.open(path.resolve(dir));
    const s = store.status();
    process.stdout.write(`sample project at ${path.resolve(dir)}: ${ids.length} memories stored; now ${s.by_phase.full} full, ${s.by_phase.hint} hint, ${s.by_phase.abstract} abstract, ${s.total_archived} archived\n`);
  });
}
