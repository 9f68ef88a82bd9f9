/** What the extension-host test files share: the extension's ID, and waiting for a condition the UI reaches asynchronously. */

export const EXTENSION_ID = 'ltm-tools.ltm';

/**
 * Polls `probe` (every 100 ms) until it gives a truthy value, which it
 * returns. A probe that throws is tried again (the view or file it reads may
 * be mid-update); after `timeoutMs` it fails naming `what` and the last error.
 */
export async function waitFor<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
