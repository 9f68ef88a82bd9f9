import { strict as assert } from 'node:assert';
import { countOf } from '../../src/shared/wording';

describe('wording', () => {
  it('countOf says one thing in the singular and any other count in the plural', () => {
    assert.equal(countOf(1, 'issue'), '1 issue');
    assert.equal(countOf(0, 'issue'), '0 issues');
    assert.equal(countOf(2, 'memory', 'memories'), '2 memories');
    assert.equal(countOf(1, 'memory', 'memories'), '1 memory');
  });
});
