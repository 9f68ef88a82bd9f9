/** Errors the engine reports to people: each message names the problem. */

/** `unreadable`: a file of the store is there but cannot be read as one (a directory in its place, no permission). */
export type LtmErrorCode = 'invalid_input' | 'not_found' | 'no_store' | 'busy' | 'unreadable';

export class LtmError extends Error {
  constructor(
    readonly code: LtmErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LtmError';
  }
}

/**
 * A file changed on disk after a command read it and before it was written or removed
 * (a person saved it in an editor meanwhile): nothing was written over it.
 */
export class ChangedOnDiskError extends LtmError {
  constructor(readonly file: string) {
    super('busy', `${file} was changed on disk while LTM was changing it (saved in an editor?): the saved text was kept, nothing was written over it or removed. Try again.`);
    this.name = 'ChangedOnDiskError';
  }
}

export function invalidInput(message: string): LtmError {
  return new LtmError('invalid_input', message);
}

export function notFound(message: string): LtmError {
  return new LtmError('not_found', message);
}

/** A file of the store that exists but cannot be read (`error` from the read), with what to do about it. */
export function unreadableFile(file: string, error: unknown): LtmError {
  const code = (error as { code?: unknown } | null)?.code;
  const why = code === 'EISDIR' ? 'it is a directory, not a file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : errorMessage(error);
  return new LtmError('unreadable', `cannot read ${file}: ${why}. Move it away or correct its permissions; \`ltm fix\` then writes it anew.`);
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
