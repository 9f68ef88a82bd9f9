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

/** The text of anything thrown: its message (an Error's, also one from another realm), or the value itself as text. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  const message = error !== null && typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
  if (typeof message === 'string') return message;
  try {
    return String(error);
  } catch {
    // An object without toString (Object.create(null)): describing a failure must not fail.
    return Object.prototype.toString.call(error);
  }
}

/**
 * What a person is told about a failure: the engine's own errors, which name
 * the problem, as they are; anything else marked as unexpected.
 */
export function describeError(error: unknown): string {
  return error instanceof LtmError ? error.message : `unexpected error: ${errorMessage(error)}`;
}
