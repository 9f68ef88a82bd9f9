/**
 * A person's save made to land at an exact moment of a write: right after a
 * rename onto a file, in this process. The files and the code under test are
 * real; only the timing is made certain.
 */
// The module object itself (not a namespace copy): what the code under test calls through.
import fs from 'node:fs';

/** Runs `work` (until its promise settles, if it returns one) while each rename onto `target` is followed at once by `then`. */
export function afterRenameOnto<T>(target: string, then: () => void, work: () => T): T {
  const rename = fs.renameSync;
  const restore = () => {
    fs.renameSync = rename;
  };
  fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
    rename(from, to);
    if (String(to) === target) then();
  };
  let result: T;
  try {
    result = work();
  } catch (error) {
    restore();
    throw error;
  }
  if (result instanceof Promise) return result.finally(restore) as T;
  restore();
  return result;
}
