import { strict as assert } from 'node:assert';
import { conflictingFields, differingFields, fieldsOf, tagsOf, updateFor } from '../../src/vscode/memoryEdit';
import { parseFromWebview, type MemoryFields } from '../../src/shared/protocol';

const memory = { topic: 'Pool size', tags: ['importance:critical', 'db'], summary: 'Raise the pool to 50.', content: 'Batch jobs ran it dry.' };

describe('the memory panel’s edit (memoryEdit.ts)', () => {
  it('edits importance apart from the other tags, and puts it back as its tag', () => {
    const fields = fieldsOf(memory);
    assert.deepEqual(fields.tags, ['db']);
    assert.equal(fields.importance, 'critical');
    assert.deepEqual(tagsOf({ ...fields, importance: 'low' }), ['db', 'importance:low']);
    assert.deepEqual(tagsOf({ ...fields, importance: 'normal' }), ['db']);
  });

  it('saves only the changed fields', () => {
    const base = fieldsOf(memory);
    assert.deepEqual(updateFor({ base, draft: base }), {});
    assert.deepEqual(updateFor({ base, draft: { ...base, summary: 'Raise it to 60.' } }), { summary: 'Raise it to 60.' });
    assert.deepEqual(updateFor({ base, draft: { ...base, importance: 'important' } }), { tags: ['db', 'importance:important'] });
    assert.deepEqual(updateFor({ base, draft: { ...base, topic: 'T', content: 'C' } }), { topic: 'T', content: 'C' });
  });

  it('a change on disk to a field the edit changes is a conflict; to another field it is not', () => {
    const base = fieldsOf(memory);
    const edit = { base, draft: { ...base, summary: 'Mine.' } };
    assert.deepEqual(conflictingFields(edit, base), []);
    assert.deepEqual(conflictingFields(edit, { ...base, summary: 'Theirs.' }), ['summary']);
    assert.deepEqual(conflictingFields(edit, { ...base, content: 'Theirs.' }), [], 'their content is kept: the save writes the summary only');
    assert.deepEqual(conflictingFields({ base, draft: { ...base, importance: 'low' } }, { ...base, tags: ['db', 'x'] }), ['tags']);
    // Once the person saw theirs and chose to overwrite, theirs is the base the next check compares with.
    const theirs: MemoryFields = { ...base, summary: 'Theirs.' };
    assert.deepEqual(conflictingFields(edit, theirs, theirs), []);
    assert.deepEqual(differingFields(base, theirs), ['summary']);
  });

  it('checks an edit from the page before it is used', () => {
    const base = fieldsOf(memory);
    assert.ok(parseFromWebview({ type: 'edit', id: 'm', edit: { base, draft: base } }));
    assert.ok(parseFromWebview({ type: 'edit', id: 'm', edit: null }));
    assert.equal(parseFromWebview({ type: 'edit', id: 'm', edit: { base, draft: { ...base, importance: 'urgent' } } }), null);
    assert.equal(parseFromWebview({ type: 'edit', id: 'm', edit: { base, draft: { ...base, tags: [1] } } }), null);
    assert.equal(parseFromWebview({ type: 'edit', id: 'm', edit: { base } }), null);
    assert.equal(parseFromWebview({ type: 'save', id: 'm' }), null);
    assert.ok(parseFromWebview({ type: 'save', id: 'm', overwrite: false }));
    assert.equal(parseFromWebview({ type: 'openLink', url: 5 }), null);
    assert.equal(parseFromWebview({ type: 'saveSummary', id: 'm', summary: 'x' }), null, 'the old message is gone');
  });
});
