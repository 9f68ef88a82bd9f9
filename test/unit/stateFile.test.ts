import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
// The module object itself (not a namespace copy): what the code under test calls through.
import fsModule from 'node:fs';
import * as path from 'node:path';
import { LtmError } from '../../src/core/errors';
import { TEMP_SUFFIX, toJsonText } from '../../src/core/files';
import { STATE_UPDATE_ATTEMPTS, StateFile } from '../../src/core/stateFile';
import { makeTempProject, removeDir } from '../support/storeKit';

describe('StateFile', () => {
  let dir: string;
  let file: string;
  let reads: number;
  let stateFile: StateFile;
  const onDisk = () => JSON.parse(fs.readFileSync(file, 'utf8')) as { session_count: number; config: Record<string, unknown> };
  /** A person's editor saving the file: in place, without the store's lock. */
  const saveInPlace = (change: (json: { session_count: number; config: Record<string, unknown> }) => void) => {
    const json = onDisk();
    change(json);
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
  };
  const tempFiles = () => fs.readdirSync(dir).filter((n) => n.endsWith(TEMP_SUFFIX));

  beforeEach(() => {
    dir = makeTempProject('ltm-state-');
    file = path.join(dir, 'state.json');
    reads = 0;
    stateFile = new StateFile(file, () => reads++);
  });
  afterEach(() => removeDir(dir));

  it('an update writes the file and remembers it: the next refresh() reads nothing', () => {
    stateFile.refresh();
    assert.equal(stateFile.status.kind, 'missing');
    const result = stateFile.update((state) => (state.session_count = 2));
    assert.equal(result, 2, 'the change’s value is returned');
    const state = stateFile.state;
    stateFile.refresh();
    assert.equal(stateFile.state, state, 'not read again');
    assert.equal(reads, 0);
    assert.equal(onDisk().session_count, 2);
    assert.equal(stateFile.status.kind, 'ok');
    assert.deepEqual(tempFiles(), []);
  });

  it('a file changed by another writer is read again; one that cannot be read gives the defaults and says why', () => {
    stateFile.update((state) => (state.session_count = 2));
    fs.writeFileSync(`${file}.new`, toJsonText({ version: 1, session_count: 42 }));
    fs.renameSync(`${file}.new`, file);
    stateFile.refresh();
    assert.equal(stateFile.state.session_count, 42);
    assert.equal(reads, 1);
    fs.writeFileSync(file, '{');
    stateFile.refresh();
    assert.equal(stateFile.status.kind, 'unreadable');
    assert.equal(stateFile.state.session_count, 0);
    fs.rmSync(file);
    stateFile.refresh();
    assert.equal(stateFile.status.kind, 'missing');
    assert.equal(reads, 3);
  });

  it('an update applies its change again to a file a person saved after it was read, instead of writing over it', () => {
    stateFile.update((state) => (state.session_count = 1));
    let runs = 0;
    stateFile.update((state) => {
      runs++;
      state.session_count += 1;
      if (runs === 1) saveInPlace((json) => (json.config.memories_to_load = 42));
    });
    assert.equal(runs, 2);
    assert.deepEqual([onDisk().session_count, onDisk().config.memories_to_load], [2, 42]);
    assert.equal(stateFile.state.config.memories_to_load, 42);
    assert.deepEqual(tempFiles(), [], 'the write left behind was removed');
  });

  it('a file a person creates while the first update is written is kept too', () => {
    stateFile.refresh();
    let runs = 0;
    stateFile.update((state) => {
      runs++;
      state.session_count += 1;
      if (runs === 1) fs.writeFileSync(file, JSON.stringify({ session_count: 7, config: { max_memories: 12 } }));
    });
    assert.deepEqual([onDisk().session_count, onDisk().config.max_memories], [8, 12]);
  });

  it('an asynchronous update keeps refresh() off the file while it writes, then applies its change to what was saved meanwhile', async () => {
    stateFile.update((state) => (state.session_count = 1));
    let runs = 0;
    const updating = stateFile.updateAsync((state) => {
      runs++;
      state.session_count += 1;
    }, false);
    // The temporary file is being written on the thread pool: a person saves now.
    saveInPlace((json) => (json.config.memories_to_load = 9));
    const during = stateFile.state;
    stateFile.refresh();
    assert.equal(stateFile.state, during, 'refresh() read the file during the write');
    assert.equal(stateFile.state.session_count, 2);
    await updating;
    assert.equal(runs, 2);
    assert.deepEqual([onDisk().session_count, onDisk().config.memories_to_load], [2, 9]);
    assert.deepEqual(tempFiles(), []);
  });

  it(`gives up with "busy" after ${STATE_UPDATE_ATTEMPTS} attempts when every one finds the file changed, writing nothing over it`, async () => {
    stateFile.update((state) => (state.session_count = 1));
    let runs = 0;
    await assert.rejects(
      stateFile.updateAsync((state) => {
        runs++;
        state.session_count = 100;
        saveInPlace((json) => (json.config.memories_to_load = runs));
      }),
      (error: LtmError) => error.code === 'busy' && /state\.json changed 5 times while it was being written/.test(error.message),
    );
    assert.equal(runs, STATE_UPDATE_ATTEMPTS);
    assert.deepEqual([onDisk().session_count, onDisk().config.memories_to_load], [1, STATE_UPDATE_ATTEMPTS]);
    assert.deepEqual(tempFiles(), []);
  });

  it('never writes over a file it cannot read; writeAnew (fix, once it moved the file away) does', async () => {
    const halfSaved = '{"session_count": 3, "config": {"max_memo';
    fs.writeFileSync(file, halfSaved);
    stateFile.refresh();
    assert.throws(() => stateFile.update((state) => (state.session_count += 1)), (error: LtmError) => error.code === 'unreadable' && /state\.json cannot be read \(.+\), so its settings are unknown/.test(error.message));
    await assert.rejects(stateFile.updateAsync((state) => (state.session_count += 1)), (error: LtmError) => error.code === 'unreadable');
    assert.equal(fs.readFileSync(file, 'utf8'), halfSaved);
    fs.renameSync(file, `${file}.quarantined`);
    stateFile.writeAnew();
    assert.equal(stateFile.status.kind, 'ok');
    assert.equal(onDisk().session_count, 0);
    stateFile.update((state) => (state.session_count = 5));
    assert.equal(onDisk().session_count, 5);
  });

  it('keeps no change that was not written: a failed write or a change that threw leaves the state as the file has it', async () => {
    stateFile.update((state) => (state.session_count = 1));
    const open = fsModule.openSync;
    fsModule.openSync = ((target: fs.PathLike, ...rest: unknown[]) => {
      if (String(target).endsWith(TEMP_SUFFIX)) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return (open as (...args: unknown[]) => number)(target, ...rest);
    }) as typeof open;
    try {
      assert.throws(() => stateFile.update((state) => (state.config.max_memories = 7)), /ENOSPC/);
    } finally {
      fsModule.openSync = open;
    }
    await assert.rejects(
      stateFile.updateAsync((state) => {
        state.config.memories_to_load = 3;
        throw new Error('a change that fails half way');
      }),
      /half way/,
    );
    assert.notEqual(stateFile.state.config.max_memories, 7);
    assert.notEqual(stateFile.state.config.memories_to_load, 3);
    // The next update writes its own change only.
    stateFile.update((state) => (state.session_count = 2));
    assert.deepEqual([onDisk().session_count, onDisk().config.max_memories === 7, onDisk().config.memories_to_load === 3], [2, false, false]);
    assert.deepEqual(tempFiles(), []);
  });
});
