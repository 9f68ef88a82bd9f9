/**
 * The anchor-writing commands (src/core/anchorCommands.ts) on a store's parts
 * with a real store lock: set, re-anchor and follow moved code, each memory
 * written in its own turn of the lock.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { followAnchors, reanchor, updateWithAnchors, writeAnchors, type AnchorCommandParts } from '../../src/core/anchorCommands';
import { StoreLock } from '../../src/core/lock';
import type { StoreParts } from '../../src/core/storeParts';
import type { UpdateResult } from '../../src/core/storeTypes';
import { makeParts, makeTempProject, removeDir, splitFile, testId, writeMemory } from '../support/storeKit';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `const line${i + 1} = ${i + 1};`).join('\n') + '\n';
const [A, B] = [testId(0xa), testId(0xb)];

describe('anchorCommands: writing a memory\'s anchors', () => {
  let project: string;
  let parts: StoreParts;
  let commands: AnchorCommandParts;
  /** How many turns of the lock were taken. */
  let turns: number;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    fs.writeFileSync(path.join(project, file), text);
  };
  const memoryFile = (id: string) => fs.readFileSync(path.join(parts.paths.memories, `${id}.md`), 'utf8');

  beforeEach(() => {
    project = makeTempProject('ltm-anchor-commands-');
    write('src/db/pool.ts', numbered(40));
    parts = makeParts(project);
    const lock = new StoreLock(parts.paths.root, parts.paths.lock);
    turns = 0;
    commands = {
      ...parts,
      mutate: (work) =>
        lock.run(() => {
          turns++;
          parts.mirror.refresh();
          return work();
        }),
    };
    writeMemory(parts.paths.root, A);
    writeMemory(parts.paths.root, B);
    parts.mirror.refresh();
  });
  afterEach(() => {
    parts.mirror.dispose();
    removeDir(project);
  });

  it('writeAnchors changes only the anchors field, under the lock; an empty list removes it', async () => {
    const before = memoryFile(A);
    const anchors = parts.anchoring.anchorsFor(['src/db/pool.ts#L10-12']);
    const view = await writeAnchors(commands, A, () => anchors);
    assert.equal(turns, 1);
    assert.deepEqual(view.anchors.map((a) => [a.path, a.lines]), [['src/db/pool.ts', [10, 12]]]);
    const after = memoryFile(A);
    assert.match(splitFile(after).frontmatter, /\nanchors:\n {2}- path: "src\/db\/pool\.ts"\n {4}lines: "10-12"\n/);
    assert.equal(splitFile(after).body, splitFile(before).body);
    await writeAnchors(commands, A, () => []);
    assert.equal(memoryFile(A), before);
  });

  it('writeAnchors refuses a memory that is not active, writing nothing', async () => {
    await assert.rejects(writeAnchors(commands, testId(0xc), () => []), /no memory with ID/);
  });

  it('reanchor hashes a stale memory\'s anchors again from the code as it is; refused while the file is gone', async () => {
    await writeAnchors(commands, A, () => parts.anchoring.anchorsFor(['src/db/pool.ts#L10-12']));
    write('src/db/pool.ts', numbered(40).replace('line11 = 11', 'line11 = 99'));
    const stale = parts.mirror.files.get(A)!.memory.anchors;
    assert.equal(parts.anchoring.report(stale)!.stale, true);
    const view = await reanchor(commands, A);
    assert.equal(parts.anchoring.report(view.anchors)!.stale, false);
    assert.notEqual(view.anchors[0]!.hash, stale[0]!.hash);
    fs.rmSync(path.join(project, 'src/db/pool.ts'));
    const text = memoryFile(A);
    assert.throws(() => reanchor(commands, A), /src\/db\/pool\.ts does not exist/);
    assert.equal(memoryFile(A), text);
  });

  it('followAnchors writes where moved lines are now, one turn of the lock per memory, and only the memories that moved', async () => {
    await writeAnchors(commands, A, () => parts.anchoring.anchorsFor(['src/db/pool.ts#L10-12']));
    const untouched = memoryFile(B);
    write('src/db/pool.ts', `import { a } from 'a';\nimport { b } from 'b';\n${numbered(40)}`);
    turns = 0;
    assert.deepEqual(await followAnchors(commands), [A]);
    assert.equal(turns, 1);
    assert.match(memoryFile(A), /lines: "12-14"\n/);
    assert.equal(memoryFile(B), untouched);
    assert.deepEqual(await followAnchors(commands), [], 'nothing left to follow');
  });

  it('followAnchors passes over a memory forgotten meanwhile and writes the rest', async () => {
    await writeAnchors(commands, A, () => parts.anchoring.anchorsFor(['src/db/pool.ts#L10-12']));
    await writeAnchors(commands, B, () => parts.anchoring.anchorsFor(['src/db/pool.ts#L20-22']));
    write('src/db/pool.ts', `// moved\n${numbered(40)}`);
    const forgetA: AnchorCommandParts = {
      ...commands,
      mutate: (work) => {
        // Another process removes A before this one takes the lock for it.
        fs.rmSync(path.join(parts.paths.memories, `${A}.md`), { force: true });
        return commands.mutate(work);
      },
    };
    assert.deepEqual(await followAnchors(forgetA), [B]);
    assert.match(memoryFile(B), /lines: "21-23"\n/);
  });

  it('updateWithAnchors: the text first (when a field is given), then the anchors, each in a turn of its own; `anchors` named only when they changed', async () => {
    const textUpdates: string[] = [];
    const updateText = async (): Promise<UpdateResult> => {
      textUpdates.push(A);
      return { memory: parts.queries.view(A), changed: ['topic'], redactions: [], versions: ['mem_000000ff'] };
    };
    const set = await updateWithAnchors(commands, A, ['src/db/pool.ts#L10-12'], { topic: 'New topic' }, updateText);
    assert.deepEqual(textUpdates, [A]);
    assert.equal(turns, 1, 'the anchors in a turn of the lock (the text update takes its own)');
    assert.deepEqual(set.changed, ['topic', 'anchors']);
    assert.deepEqual(set.versions, ['mem_000000ff'], 'what the text update archived is kept');
    assert.deepEqual(set.memory.anchors.map((a) => [a.path, a.lines]), [['src/db/pool.ts', [10, 12]]]);
    // The same anchors again, no text field: nothing changed, no text update.
    const again = await updateWithAnchors(commands, A, ['src/db/pool.ts#L10-12'], { topic: undefined }, updateText);
    assert.deepEqual(textUpdates, [A]);
    assert.deepEqual([again.changed, again.versions, again.redactions], [[], [], []]);
  });

  it('updateWithAnchors refuses a bad anchor before anything is written, and a memory that is not active', async () => {
    const before = memoryFile(A);
    let updated = false;
    const updateText = async (): Promise<UpdateResult> => {
      updated = true;
      return { memory: parts.queries.view(A), changed: [], redactions: [], versions: [] };
    };
    await assert.rejects(updateWithAnchors(commands, A, ['src/missing.ts#L1'], { topic: 'x' }, updateText), /src\/missing\.ts/);
    assert.equal(updated, false);
    assert.equal(turns, 0);
    assert.equal(memoryFile(A), before);
    await assert.rejects(updateWithAnchors(commands, testId(0xc), [], {}, updateText), /no memory with ID/);
  });
});
