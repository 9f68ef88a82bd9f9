/**
 * `ltm serve` in its own process, as the benchmark sections run it: the
 * esbuild bundle (dist/cli.js) as shipped, so client and server share no
 * event loop and the times include what a user's server pays.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { storePaths } from '../../src/core/storeFiles';

export interface ServerHandle {
  child: ChildProcess;
  port: number;
  token: string;
  /** performance.now() just before the spawn: the start of "serve start → first answer". */
  spawnedAt: number;
  /** spawn → "serving" on stdout (server.json is written just before). */
  startMs: number;
  stdout: () => string;
  stderr: () => string;
}

/** Starts `node dist/cli.js serve --project <dir>` and waits until it serves. */
export async function startServer(cliPath: string, projectDir: string): Promise<ServerHandle> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cliPath, 'serve', '--project', projectDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`ltm serve did not start within 60 s:\n${out}\n${err}`)), 60_000);
    const onData = () => {
      if (/ serving /.test(out)) done();
    };
    const onExit = (code: number | null) => done(new Error(`ltm serve exited (code ${code}) before serving:\n${out}\n${err}`));
    function done(error?: Error) {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      if (error) {
        child.kill('SIGKILL');
        reject(error);
      } else resolve();
    }
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
  const startMs = performance.now() - t0;
  const info = JSON.parse(fs.readFileSync(storePaths(projectDir).server, 'utf8')) as { port: number; token: string; pid: number };
  if (info.pid !== child.pid) throw new Error(`server.json names pid ${info.pid}, not the server just started (${child.pid})`);
  return { child, port: info.port, token: info.token, spawnedAt: t0, startMs, stdout: () => out, stderr: () => err };
}

/**
 * Waits until the server's /health says `ready`: its store open and its
 * search index loaded (`ltm serve` reads them after it starts serving). For
 * what is measured on an opened server, such as its first call.
 */
export async function untilReady(server: ServerHandle, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ready = await new Promise<boolean>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: server.port, path: '/health', headers: { Authorization: `Bearer ${server.token}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (s: string) => (body += s));
        res.on('end', () => resolve(res.statusCode === 200 && (JSON.parse(body) as { ready?: unknown }).ready === true));
      });
      req.on('error', reject);
    });
    if (ready) return;
    if (performance.now() > deadline) throw new Error(`ltm serve was not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** SIGTERM, as an editor or a terminal stops it; checks it exits 0 and removes server.json. */
export async function stopServer(server: ServerHandle, projectDir: string): Promise<number> {
  const t0 = performance.now();
  const exited = new Promise<number | null>((resolve) => {
    if (server.child.exitCode !== null) resolve(server.child.exitCode);
    else server.child.once('exit', (code) => resolve(code));
  });
  server.child.kill('SIGTERM');
  const code = await exited;
  const stopMs = performance.now() - t0;
  if (code !== 0) throw new Error(`ltm serve exited with code ${code} on SIGTERM:\n${server.stderr()}`);
  if (fs.existsSync(storePaths(projectDir).server)) throw new Error('ltm serve left server.json behind after SIGTERM');
  return stopMs;
}
