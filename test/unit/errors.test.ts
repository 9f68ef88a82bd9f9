import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeError, errorMessage, invalidInput, LtmError, unreadableFile } from '../../src/core/errors';

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

  it('a store file that cannot be read is named, with why and what to do, from the error the read raised', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-errors-'));
    try {
      const raised = (() => {
        try {
          fs.readFileSync(dir, 'utf8');
        } catch (error) {
          return error;
        }
        throw new Error('reading a directory did not fail');
      })();
      const error = unreadableFile(dir, raised);
      assert.equal(error.code, 'unreadable');
      assert.equal(error.message, `cannot read ${dir}: it is a directory, not a file. Move it away or correct its permissions; \`ltm fix\` then writes it anew.`);
      assert.match(unreadableFile('/x/state.json', Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })).message, /^cannot read \/x\/state\.json: permission denied\./);
      assert.match(unreadableFile('/x/state.json', new Error('EIO: i/o error')).message, /^cannot read \/x\/state\.json: EIO: i\/o error\./);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
});
