import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { MAX_CONTENT_CHARS } from '../../src/core/storeInput';
import type { MemoryFields, NewMemoryInput, PersistedPanelState } from '../../src/shared/protocol';
import { draftText, parsePanelState } from '../../src/vscode/panelState';

const folder = 'file:///home/dev/project';
const id = 'mem_0123abcd';
const base: MemoryFields = { topic: 'Pool size', tags: ['db'], importance: 'normal', summary: 'Raise it to 50.', content: 'Batch jobs ran it dry.' };
const draft: MemoryFields = { ...base, summary: 'Raise it to 60.' };
const form: NewMemoryInput = { topic: 'Retries need jitter', summary: '', content: 'Waves of retries.', tags: 'http', importance: 'normal', files: 'src/retry.ts#L1-4' };
const memoryState = { panel: { view: 'memory', folder, id, pinned: true }, edit: { base, draft }, form: null };

describe('the state a panel’s page keeps for a window reload (panelState.ts)', () => {
  it('takes a memory panel’s identity and draft, and a New memory form’s fields', () => {
    assert.deepEqual(parsePanelState(memoryState, 'memory'), memoryState);
    const formState = { panel: { view: 'newMemory', folder }, edit: null, form };
    assert.deepEqual(parsePanelState(formState, 'newMemory'), formState);
    assert.deepEqual(parsePanelState({ panel: { view: 'integrity', folder } }, 'integrity'), { panel: { view: 'integrity', folder }, edit: null, form: null });
    assert.deepEqual(parsePanelState({ panel: { view: 'archives' } }, 'archives'), { panel: { view: 'archives' }, edit: null, form: null });
  });

  it('rejects what is not a state, or the state of another view', () => {
    for (const value of [undefined, null, 0, 'memory', [], [memoryState], true, () => memoryState, { panel: null }, { panel: [] }, { panel: { view: 'settings' } }]) {
      assert.equal(parsePanelState(value, 'memory'), null, `${String(value)}`);
    }
    assert.equal(parsePanelState(memoryState, 'newMemory'), null, 'a serializer of one view restores no other');
    assert.equal(parsePanelState({ panel: { view: 'archives' } }, 'integrity'), null);
  });

  it('rejects an identity of the wrong types, an ID that is no memory ID, a folder that is empty or huge', () => {
    const panel = memoryState.panel;
    for (const bad of [
      { ...panel, id: 42 },
      { ...panel, id: '../../../etc/passwd' },
      { ...panel, id: 'mem_0123ABCD' },
      { ...panel, id: `${id}\n` },
      { ...panel, pinned: 'yes' },
      { ...panel, folder: 7 },
      { ...panel, folder: '' },
      { ...panel, folder: `file:///${'a'.repeat(100_000)}` },
      { view: 'memory', folder, id },
    ]) {
      assert.equal(parsePanelState({ ...memoryState, panel: bad }, 'memory'), null, JSON.stringify(bad).slice(0, 80));
    }
    assert.equal(parsePanelState({ panel: { view: 'integrity', folder: { toString: () => folder } } }, 'integrity'), null);
  });

  it('drops a draft of the wrong shape or size but keeps the panel', () => {
    const drafts: unknown[] = [
      'Raise it to 60.',
      { base },
      { base, draft: { ...draft, importance: 'urgent' } },
      { base, draft: { ...draft, tags: 'db' } },
      { base, draft: { ...draft, tags: [1] } },
      { base, draft: { ...draft, tags: Array.from({ length: 10_000 }, (_, i) => `t${i}`) } },
      { base, draft: { ...draft, summary: null } },
      { base, draft: { ...draft, content: 'x'.repeat(MAX_CONTENT_CHARS + 1) } },
      { base, draft: { ...draft, tags: ['y'.repeat(MAX_CONTENT_CHARS + 1)] } },
    ];
    for (const edit of drafts) {
      const state = parsePanelState({ ...memoryState, edit }, 'memory');
      assert.deepEqual(state, { ...memoryState, edit: null }, JSON.stringify(edit).slice(0, 80));
    }
    for (const bad of [{ ...form, files: undefined }, { ...form, topic: ['x'] }, { ...form, content: 'z'.repeat(MAX_CONTENT_CHARS + 1) }, 'form']) {
      assert.deepEqual(parsePanelState({ panel: { view: 'newMemory', folder }, form: bad }, 'newMemory'), { panel: { view: 'newMemory', folder }, edit: null, form: null });
    }
    // A draft only belongs to its own view: a form in a memory panel's state is ignored, and the reverse.
    assert.equal(parsePanelState({ ...memoryState, form }, 'memory')!.form, null);
    assert.equal(parsePanelState({ panel: { view: 'newMemory', folder }, edit: { base, draft } }, 'newMemory')!.edit, null);
  });

  it('takes prototype keys and extra keys as data, copies nothing but the fields, and changes no prototype', () => {
    const hostile = JSON.parse(
      JSON.stringify({
        panel: { view: 'memory', folder, id, pinned: false, token: 'secret-token' },
        edit: { base: { ...base, extra: 1 }, draft: { ...draft, constructor: 'x' } },
        extra: 'kept nowhere',
      }).replace('"extra":"kept nowhere"', '"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}'),
    ) as unknown;
    const state = parsePanelState(hostile, 'memory') as PersistedPanelState;
    assert.deepEqual(state, { panel: { view: 'memory', folder, id, pinned: false }, edit: { base, draft }, form: null });
    assert.equal(Object.getPrototypeOf(state), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted');
    assert.equal(JSON.stringify(state).includes('secret-token'), false, 'an unknown key (a token) is not carried along');
    assert.equal(parsePanelState(JSON.parse('{"__proto__":{"panel":{"view":"archives"}}}'), 'archives'), null, 'a panel only under __proto__ is no panel');
    assert.equal(parsePanelState(Object.create({ panel: { view: 'archives' } }), 'archives'), null, 'nor an inherited one');
  });

  it('never throws, whatever it is given', () => {
    const throwing = { get panel(): unknown {
      throw new Error('a getter');
    } };
    assert.equal(parsePanelState(throwing, 'memory'), null);
    const views = ['memory', 'newMemory', 'integrity', 'archives'] as const;
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true, withSparseArray: true }), fc.constantFrom(...views), (value, view) => {
        const state = parsePanelState(value, view);
        assert.ok(state === null || state.panel.view === view);
      }),
    );
    // Near misses of a valid state: each key of it replaced by anything.
    fc.assert(
      fc.property(fc.constantFrom('panel', 'edit', 'form'), fc.anything(), (key, value) => {
        const state = parsePanelState({ ...memoryState, [key]: value }, 'memory');
        assert.ok(state === null || (state.panel.view === 'memory' && state.panel.id === id));
      }),
    );
  });

  it('writes a draft out as text for a panel that cannot show it as a form', () => {
    assert.match(draftText(parsePanelState(memoryState, 'memory')!)!, /Topic: Pool size\n[\s\S]*Summary:\nRaise it to 60\.\n\nContent:\nBatch jobs ran it dry\./);
    assert.match(draftText({ panel: { view: 'newMemory', folder }, edit: null, form })!, /Files: src\/retry\.ts#L1-4/);
    assert.equal(draftText({ panel: { view: 'archives' }, edit: null, form: null }), null);
  });
});
