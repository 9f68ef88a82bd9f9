/**
 * A server listens before its store is read (MemoryStore.prepare, as `ltm
 * serve` runs it): the port and server.json are there at once, health and the
 * MCP handshake are answered without the memories, and the first request that
 * needs them opens the store completely, so it sees every file as it is on
 * disk, hand edits made while no process ran included.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { MemoryStore } from '../../src/core/store';
import { RankingTable } from '../../src/core/ranking';
import { INDEX_ASIDE_MIN_MEMORIES } from '../../src/core/searchIndexAside';
import { storePaths } from '../../src/core/storeFiles';
import { SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES } from '../../src/core/storeOpening';
import CLI_FILES from '../../src/shared/cliFiles.json';
import { LtmServer } from '../../src/servers/ltmServer';
import type { SessionSituation } from '../../src/core/situation';
import { statPathsDuring } from '../support/fsCalls';
import { upsertsDuring } from '../support/searchIndexCalls';
import { REPO_ROOT, ensureCliBuilt, ltmRoot, makeTempProject, removeDir, testId, writeMemory } from '../support/storeKit';
import { mcpClient, postHook, rawRequest, serverJsonPath, sessionStartPayload, type Json } from '../support/serverKit';

const MEMORIES = 60;

/** A store of MEMORIES memories whose caches (parse-cache.json, search-index.bin) are saved, as a server that stopped leaves them. */
async function storeWithCaches(project: string): Promise<string[]> {
  const store = MemoryStore.open(project);
  store.init();
  const ids: string[] = [];
  for (let i = 0; i < MEMORIES; i++) {
    const stored = await store.store({ topic: `Build step ${i}`, content: `Run the build step number ${i} with the cache warmed.`, tags: ['build'] });
    ids.push(stored.memory.id);
  }
  store.flushCaches();
  store.dispose();
  return ids;
}

function recallText(result: unknown): string {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return content.map((c) => c.text).join('\n');
}

describe('a server that listens before its store is read', function () {
  this.timeout(30_000);
  let project: string;
  let ids: string[];
  let store: MemoryStore;
  let server: LtmServer | undefined;

  beforeEach(async () => {
    project = makeTempProject('ltm-prepared-');
    ids = await storeWithCaches(project);
    store = MemoryStore.prepare(project);
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    store.dispose();
    removeDir(project);
  });

  it('claims the project and answers health without reading a memory; the first recall opens the store and sees a hand edit made before', async () => {
    // Edited in place while no process ran: its parse-cache.json record and search-index.bin document are of the old text.
    const edited = path.join(ltmRoot(project), 'memories', `${ids[7]}.md`);
    fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace('Run the build step number 7', 'Rotate the zeppelin credentials, step number 7'));

    server = await LtmServer.start({ store, version: 'test' });
    assert.equal(store.isOpen, false, 'starting the server read the store');
    const info = JSON.parse(fs.readFileSync(serverJsonPath(project), 'utf8')) as { port: number; pid: number };
    assert.equal(info.port, server.port);
    assert.equal(info.pid, process.pid);
    const health = await rawRequest(server.port, { path: '/health', headers: { Authorization: `Bearer ${server.token}` } });
    assert.equal(health.status, 200);
    assert.equal(health.json().project, store.paths.project);
    assert.equal(store.isOpen, false, 'health read the store');

    const client = await mcpClient(server.port, server.token);
    try {
      const recalled = recallText(await client.callTool({ name: 'recall', arguments: { query: 'zeppelin credentials' } }));
      assert.ok(store.isOpen);
      assert.match(recalled, new RegExp(ids[7]!), `the edited memory was not found: ${recalled}`);
      assert.doesNotMatch(recalled, new RegExp(ids[8]!));
    } finally {
      await client.close();
    }
  });

  it('the first session_start opens the store and injects every memory it holds', async () => {
    server = await LtmServer.start({ store, version: 'test' });
    assert.equal(store.isOpen, false);
    const answer = await postHook(server.port, server.token, 'session_start', sessionStartPayload('s-prepared'));
    assert.equal(answer.status, 200, answer.text);
    const context = ((answer.json().hookSpecificOutput as Json).additionalContext as string) ?? '';
    const injected = ids.filter((id) => context.includes(id));
    assert.ok(injected.length >= 10, `only ${injected.length} memories injected:\n${context}`);
  });

  it('a session_start sent while a large store opens in steps waits for it, rather than statting every memory file a second time', async () => {
    // Large by the size of its record cache (trailing spaces keep the JSON as it was): a worker thread stats the files.
    fs.appendFileSync(store.paths.parseCache, ' '.repeat(SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES));
    server = await LtmServer.start({ store, version: 'test' });
    const started = server;
    let context = '';
    const statted = await statPathsDuring(async () => {
      const opening = store.openInSteps();
      const answer = await postHook(started.port, started.token, 'session_start', sessionStartPayload('s-while-opening'));
      assert.equal(answer.status, 200, answer.text);
      context = ((answer.json().hookSpecificOutput as Json).additionalContext as string) ?? '';
      await opening;
    });
    assert.deepEqual(statted.filter((file) => file.endsWith('.md')), [], 'memory files statted on the server’s thread');
    assert.ok(ids.filter((id) => context.includes(id)).length >= 10, context);
  });

  it('a session_start sent while a large store opens has its situation (git) read meanwhile, not once the store is open', async () => {
    fs.appendFileSync(store.paths.parseCache, ' '.repeat(SWEEP_ASIDE_MIN_RECORD_CACHE_BYTES));
    // Whether the store was open when the situation was asked for; kept, as cachedGitSituation keeps its read.
    const asked: boolean[] = [];
    let read: Promise<SessionSituation | null> | null = null;
    const readSituation = () => {
      if (!read) {
        asked.push(store.isOpen);
        read = Promise.resolve({ branch: 'fix/build-step', changedFiles: ['src/build.ts'], recentFiles: [] });
      }
      return read;
    };
    server = await LtmServer.start({ store, version: 'test', readSituation });
    const started = server;
    const opening = store.openInSteps();
    const answer = await postHook(started.port, started.token, 'session_start', sessionStartPayload('s-situation-ahead'));
    assert.equal(answer.status, 200, answer.text);
    await opening;
    assert.deepEqual(asked, [false], 'asked once, while the store opened');
    const context = ((answer.json().hookSpecificOutput as Json).additionalContext as string) ?? '';
    assert.match(context, /fix\/build-step/, 'the session start used that situation');
  });

  it('a session_start in a git working tree tells the opening it will search (it ranks by the situation), so that the saved index is read meanwhile; elsewhere, not', async () => {
    // What the opening then does with it: storeOpening.test.ts ("the saved search index, read ahead while the worker sweeps").
    const waits = async (sessionId: string) => {
      const told: { thenSearches?: boolean }[] = [];
      const untilOpened = store.untilOpened.bind(store);
      store.untilOpened = (options = {}) => {
        told.push(options);
        return untilOpened(options);
      };
      const started = (server = await LtmServer.start({ store, version: 'test' }));
      const answer = await postHook(started.port, started.token, 'session_start', sessionStartPayload(sessionId));
      assert.equal(answer.status, 200, answer.text);
      await started.stop();
      server = undefined;
      return told;
    };
    assert.deepEqual(await waits('s-outside-git'), [{ thenSearches: false }], 'not in a repository: ranked by priority alone');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: project });
    store.dispose();
    store = MemoryStore.prepare(project);
    assert.deepEqual(await waits('s-in-git'), [{ thenSearches: true }]);
  });

  it('a session_start that waited for the opening is answered before the search index is loaded; a recall after it is answered as before', async () => {
    server = await LtmServer.start({ store, version: 'test' });
    const started = server;
    const order: string[] = [];
    const warm = store.warmUp.bind(store);
    store.warmUp = () => {
      order.push('search index loaded');
      return warm();
    };
    // What each answer's end is: the server's side of it, whatever the client does meanwhile.
    const end = http.ServerResponse.prototype.end;
    http.ServerResponse.prototype.end = function (this: http.ServerResponse, ...args: unknown[]) {
      order.push(`answered ${this.req.url ?? ''}`);
      return (end as (...a: unknown[]) => http.ServerResponse).apply(this, args);
    } as typeof end;
    try {
      const opening = store.openInSteps({ beforeSearchIndex: () => started.requestsAnswered() });
      const answer = await postHook(started.port, started.token, 'session_start', sessionStartPayload('s-before-index'));
      assert.equal(answer.status, 200, answer.text);
      await opening;
    } finally {
      http.ServerResponse.prototype.end = end;
    }
    assert.deepEqual(order, ['answered /hook/session_start', 'search index loaded']);
    const client = await mcpClient(started.port, started.token);
    try {
      const recalled = recallText(await client.callTool({ name: 'recall', arguments: { query: 'build step number 42' } }));
      assert.match(recalled, new RegExp(ids[42]!), recalled);
    } finally {
      await client.close();
    }
  });

  it('an MCP client connects and lists the tools while the search index is not ready; its first tool call waits for it', async () => {
    // The index held back, as a worker still building it would: released by the test.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ready = store.untilSearchIndexReady.bind(store);
    store.untilSearchIndexReady = async () => {
      await held;
      await ready();
    };
    server = await LtmServer.start({ store, version: 'test' });
    const stillHeld = (ms: number) => new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), ms));
    const client = await Promise.race([mcpClient(server.port, server.token), stillHeld(5_000)]);
    if (client === 'held') {
      release();
      assert.fail('the MCP handshake waited for the search index');
    }
    try {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'recall'));
      let answered = false;
      const recall = client.callTool({ name: 'recall', arguments: { query: 'build step number 42' } }).then((result) => {
        answered = true;
        return result;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(answered, false, 'the recall was answered before the search index was ready');
      release();
      assert.match(recallText(await recall), new RegExp(ids[42]!));
    } finally {
      release();
      await client.close();
    }
  });

  it('openInSteps opens the store and loads its search index; a request between the steps is answered; health says when it is ready', async () => {
    server = await LtmServer.start({ store, version: 'test' });
    const health = async () => {
      const answer = await rawRequest(server!.port, { path: '/health', headers: { Authorization: `Bearer ${server!.token}` } });
      assert.equal(answer.status, 200);
      return answer.json().ready;
    };
    assert.equal(await health(), false, 'ready before the store was read');
    const opening = store.openInSteps();
    assert.equal((await rawRequest(server.port, { path: '/health', headers: { Authorization: `Bearer ${server.token}` } })).status, 200);
    await opening;
    assert.ok(store.isOpen);
    assert.equal(store.memoryCount(), MEMORIES);
    assert.equal(await health(), true, 'not ready once opened with its search index');
  });
});

describe('MemoryStore.prepare', () => {
  let project: string;
  beforeEach(() => (project = makeTempProject('ltm-prepare-')));
  afterEach(() => removeDir(project));

  it('opens on first use, getters included: config and session count are read from state.json, not defaults', async () => {
    const writer = MemoryStore.open(project);
    writer.init();
    await writer.updateState((s) => {
      s.session_count = 41;
      s.config.max_memories = 1234;
    });
    writer.dispose();
    const store = MemoryStore.prepare(project);
    try {
      assert.equal(store.isOpen, false);
      assert.equal(store.config.max_memories, 1234);
      assert.ok(store.isOpen);
      assert.equal(store.sessionCount, 41);
    } finally {
      store.dispose();
    }
  });

  it('openInSteps ranks the memories before it resolves: the first session start ranks none of them anew', async () => {
    const writer = MemoryStore.open(project);
    writer.init();
    writer.dispose();
    for (let n = 1; n <= 40; n++) writeMemory(ltmRoot(project), testId(n), { topic: `Ranked memory ${n}`, content: `Memory number ${n}.` });
    // Every entry the ranking table takes during `work`.
    const rankedDuring = async (work: () => unknown): Promise<number> => {
      const set = RankingTable.prototype.set;
      let entries = 0;
      RankingTable.prototype.set = function (this: RankingTable, ...args: Parameters<RankingTable['set']>) {
        entries++;
        return set.apply(this, args);
      };
      try {
        await work();
      } finally {
        RankingTable.prototype.set = set;
      }
      return entries;
    };
    const opened = MemoryStore.prepare(project);
    try {
      assert.equal(await rankedDuring(() => opened.openInSteps()), 40, 'ranked while opening');
      const page = await rankedDuring(() => assert.equal(opened.topForSession(1, 10).memories.length, 10));
      assert.equal(page, 0, 'the session start found them ranked');
    } finally {
      opened.dispose();
    }
    // Opened on first use instead, the store ranks them at its first session start.
    const onFirstUse = MemoryStore.prepare(project);
    try {
      assert.equal(await rankedDuring(() => onFirstUse.topForSession(1, 10)), 40);
    } finally {
      onFirstUse.dispose();
    }
  });

  it('a store stopped before it opened saves no cache and writes nothing', () => {
    const writer = MemoryStore.open(project);
    writer.init();
    writer.dispose();
    const before = fs.readdirSync(ltmRoot(project)).sort();
    const store = MemoryStore.prepare(project);
    store.flushCaches();
    store.dispose();
    assert.equal(store.isOpen, false);
    assert.deepEqual(fs.readdirSync(ltmRoot(project)).sort(), before);
  });
});

describe('a server whose store opens without search-index.bin (a fresh clone)', function () {
  this.timeout(60_000);
  let project: string;
  let store: MemoryStore;
  let server: LtmServer | undefined;
  before(() => ensureCliBuilt());
  beforeEach(() => {
    project = makeTempProject('ltm-no-index-');
    const writer = MemoryStore.open(project);
    writer.init();
    writer.dispose();
    for (let n = 1; n <= INDEX_ASIDE_MIN_MEMORIES + 100; n++) {
      const topic = n === 500 ? 'Rotate the zeppelin credentials' : `Build step ${n}`;
      writeMemory(ltmRoot(project), testId(n), { topic, content: `Run the build step number ${n} with the cache warmed.` });
    }
    store = MemoryStore.prepare(project, { searchIndexWorker: path.join(REPO_ROOT, CLI_FILES.indexWorker) });
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    store.dispose();
    removeDir(project);
  });

  it('a recall sent while the store opens waits for the index the worker builds, rather than indexing every memory on the server’s thread', async () => {
    assert.ok(!fs.existsSync(storePaths(project).searchIndex));
    server = await LtmServer.start({ store, version: 'test' });
    const started = server;
    let recalled = '';
    let context = '';
    // Connected first (the handshake needs no memories): the recall is on its way while the store opens.
    const client = await mcpClient(started.port, started.token);
    const indexedHere = await upsertsDuring(async () => {
      const opening = store.openInSteps({ beforeSearchIndex: () => started.requestsAnswered() });
      try {
        const [recall, answer] = await Promise.all([
          client.callTool({ name: 'recall', arguments: { query: 'zeppelin credentials' } }),
          postHook(started.port, started.token, 'session_start', sessionStartPayload('s-no-index')),
        ]);
        recalled = recallText(recall);
        assert.equal(answer.status, 200, answer.text);
        context = ((answer.json().hookSpecificOutput as Json).additionalContext as string) ?? '';
      } finally {
        await client.close();
      }
      await opening;
    });
    assert.equal(indexedHere, 0, `${indexedHere} memories were indexed on the server's thread`);
    assert.match(recalled, new RegExp(testId(500)), recalled);
    assert.match(context, /Build step|zeppelin/, context);
  });
});
