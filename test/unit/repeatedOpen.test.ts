import { strict as assert } from 'node:assert';
import { DOUBLE_CLICK_MS, RepeatedOpen } from '../../src/vscode/repeatedOpen';

describe('a memory opened twice quickly from the tree is a double-click (repeatedOpen.ts)', () => {
  it('is a repeat only for the same item within DOUBLE_CLICK_MS', () => {
    const opens = new RepeatedOpen();
    assert.equal(opens.isRepeat('a', 1000), false);
    assert.equal(opens.isRepeat('a', 1000 + DOUBLE_CLICK_MS), true);
    assert.equal(opens.isRepeat('a', 1000 + DOUBLE_CLICK_MS + 1), false, 'a third click starts over');
    assert.equal(opens.isRepeat('b', 1000 + DOUBLE_CLICK_MS + 2), false, 'another item');
    assert.equal(opens.isRepeat('b', 1000 + 3 * DOUBLE_CLICK_MS + 3), false, 'too slow');
  });
});
