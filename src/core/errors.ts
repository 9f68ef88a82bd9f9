/** Errors the engine reports to people: each message names the problem. */

export type LtmErrorCode = 'invalid_input' | 'not_found' | 'no_store' | 'busy';

export class LtmError extends Error {
  constructor(
    readonly code: LtmErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LtmError';
  }
}

export function invalidInput(message: string): LtmError {
  return new LtmError('invalid_input', message);
}

export function notFound(message: string): LtmError {
  return new LtmError('not_found', message);
}
