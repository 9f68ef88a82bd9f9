import { strict as assert } from 'node:assert';
import { describeError, errorMessage, invalidInput, LtmError } from '../../src/core/errors';

describe('describing errors to people', () => {
  it("gives the engine's errors as they are and marks anything else unexpected", () => {
    assert.equal(describeError(invalidInput('limit must be a whole number ≥ 1')), 'limit must be a whole number ≥ 1');
    assert.equal(describeError(new LtmError('busy', 'another server runs')), 'another server runs');
    assert.equal(describeError(new TypeError('x is not a function')), 'unexpected error: x is not a function');
    assert.equal(describeError('thrown text'), 'unexpected error: thrown text');
  });

  it('takes the message of anything thrown, and never throws itself', () => {
    assert.equal(errorMessage(new Error('boom')), 'boom');
    assert.equal(errorMessage({ message: 'from another realm' }), 'from another realm');
    assert.equal(errorMessage(42), '42');
    assert.equal(errorMessage(undefined), 'undefined');
    assert.equal(errorMessage(null), 'null');
    assert.equal(errorMessage(Object.create(null)), '[object Object]');
  });
});
