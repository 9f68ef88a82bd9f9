/**
 * The @vscode/test-electron contract without Electron: code-server started
 * with the smoke-test driver loads the extension under development and runs
 * the mocha suite's `run()` inside its extension host; mocha's output and exit
 * code come back through the page (see ../../../shared notes on code-server).
 */
import * as fs from 'node:fs';
import { format } from 'node:util';
import { CodeServer, launchBrowser } from './codeServer';

export interface ExtensionTestRun {
  exitCode: number;
  log: string[];
}

export interface ExtensionTestOptions {
  extensionDevelopmentPath: string;
  /** The compiled suite index (exports run()). */
  extensionTestsPath: string;
  /**
   * The folder to open. It is opened as the first folder of a saved
   * multi-root workspace (`<workspace>.code-workspace`), so that the suite can
   * add and remove folders: in a single-folder window that would reload the
   * window, and end the suite with it.
   */
  workspace: string;
  /** Environment for the extension host (the extensionEnvironment payload). */
  extensionEnvironment?: Record<string, string>;
  timeoutMs?: number;
}

export async function runExtensionTests(options: ExtensionTestOptions): Promise<ExtensionTestRun> {
  const workspaceFile = `${options.workspace}.code-workspace`;
  fs.writeFileSync(workspaceFile, `${JSON.stringify({ folders: [{ path: options.workspace }], settings: {} }, null, 2)}\n`);
  const server = await CodeServer.start({ smokeTestDriver: true });
  const browser = await launchBrowser();
  const log: string[] = [];
  try {
    const page = await browser.newPage();
    let finish: (code: number) => void = () => undefined;
    const finished = new Promise<number>((resolve) => (finish = resolve));
    await page.exposeFunction('codeAutomationExit', (code: number) => finish(code));
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown[]) => {
      // Arguments as console.log got them: a format string first (mocha's "%s (%dms)").
      const line = format(...(Array.isArray(args) ? args : [args]));
      log.push(line);
      if (process.env.LTM_TEST_VERBOSE) process.stdout.write(`      [host] ${line}\n`);
    });
    const remote = `vscode-remote://127.0.0.1:${server.port}`;
    const payload: [string, string][] = [
      ['extensionDevelopmentPath', `${remote}${options.extensionDevelopmentPath}`],
      ['extensionTestsPath', `${remote}${options.extensionTestsPath}`],
      ['skipWelcome', 'true'],
    ];
    if (options.extensionEnvironment) payload.push(['extensionEnvironment', JSON.stringify(options.extensionEnvironment)]);
    const query = new URLSearchParams({ workspace: workspaceFile, payload: JSON.stringify(payload) });
    await page.goto(`${server.url}/?${query.toString()}`);
    const timeout = new Promise<number>((resolve) =>
      setTimeout(() => {
        log.push(`timed out after ${options.timeoutMs ?? 300_000} ms`);
        resolve(124);
      }, options.timeoutMs ?? 300_000).unref(),
    );
    const exitCode = await Promise.race([finished, timeout]);
    return { exitCode, log };
  } finally {
    await browser.close();
    await server.stop();
    fs.rmSync(workspaceFile, { force: true });
  }
}
