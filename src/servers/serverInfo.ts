/**
 * How hooks and terminals find a project's server: `server.json` while it
 * runs, and a persistent identity (token and last port) so that a restarted
 * server answers the Claude Code sessions that knew the old one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { LtmError } from '../core/errors';
import { readTextIfExists, writeFileAtomic } from '../core/files';
import { asProcessIdentity, holderState, pidExists, type ProcessIdentity } from '../core/processIdentity';
import type { StorePaths } from '../core/storeFiles';

export interface ServerInfo {
  port: number;
  token: string;
  pid: number;
  version: string;
  started_at: string;
  url: string;
  project: string;
  /**
   * The serving process (pid, start time, machine), so that a server.json
   * left by a process that died is known to be stale without asking the
   * port. Absent in server.json written by older versions.
   */
  holder?: ProcessIdentity;
}

const holderSchema = z.custom<ProcessIdentity>((value) => asProcessIdentity(value) !== null).transform((value) => asProcessIdentity(value)!);

const serverInfoSchema = z.object({
  port: z.number().int().min(1).max(65535),
  token: z.string().min(16),
  pid: z.number().int().min(1),
  version: z.string(),
  started_at: z.string(),
  url: z.string(),
  project: z.string(),
  holder: holderSchema.optional().catch(undefined),
});

/** A start refused because another process serves the project; `running` is its server.json. */
export class ServerRunningError extends LtmError {
  constructor(readonly running: ServerInfo) {
    super('busy', `an LTM server for ${running.project} is already running (pid ${running.pid}, ${running.url})`);
    this.name = 'ServerRunningError';
  }
}

/** The token and last port of a project, kept across restarts (git-ignored, owner-only). */
export interface ServerIdentity {
  token: string;
  port: number | null;
}

const identitySchema = z.object({ token: z.string().min(32), port: z.number().int().min(1).max(65535).nullable() });

export function identityPath(paths: StorePaths): string {
  return path.join(paths.root, 'server-identity.json');
}

export function readIdentity(paths: StorePaths): ServerIdentity | null {
  try {
    const parsed = identitySchema.safeParse(JSON.parse(readTextIfExists(identityPath(paths)) ?? 'null'));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function loadOrCreateIdentity(paths: StorePaths): ServerIdentity {
  const existing = readIdentity(paths);
  if (existing) return existing;
  const identity = { token: randomBytes(32).toString('base64url'), port: null };
  writeIdentity(paths, identity);
  return identity;
}

export function writeIdentity(paths: StorePaths, identity: ServerIdentity): void {
  writeFileAtomic(identityPath(paths), `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(identityPath(paths), 0o600);
}

export function readServerInfo(paths: StorePaths): ServerInfo | null {
  try {
    const parsed = serverInfoSchema.safeParse(JSON.parse(readTextIfExists(paths.server) ?? 'null'));
    if (!parsed.success) return null;
    const { holder, ...info } = parsed.data;
    // A holder that contradicts the pid is not this server's: judged as an older server.json.
    return holder && holder.pid === info.pid ? { ...info, holder } : info;
  } catch {
    return null;
  }
}

/** Whether two server.json contents describe the same server. */
export function sameServer(a: ServerInfo | null, b: ServerInfo | null): boolean {
  return a !== null && b !== null && a.pid === b.pid && a.port === b.port && a.token === b.token && a.started_at === b.started_at;
}

/**
 * What server.json says of its process without asking the port: 'dead' when
 * it is certainly gone; 'alive' when its recorded identity (pid and start
 * time) still runs; 'unknown' when only an answer from the port can settle
 * it: a server.json without identity (an older version) whose pid exists, or
 * a holder this machine cannot judge (another container, no start times).
 */
export function serverHolderState(info: ServerInfo): 'alive' | 'dead' | 'unknown' {
  if (info.holder) return holderState(info.holder);
  return pidExists(info.pid) ? 'unknown' : 'dead';
}

/**
 * A server an `ltm mcp` session is relayed to (stdioRelay.ts): its port on
 * 127.0.0.1, its token (sent in a header, never logged), and the project the
 * session is in (sent too: the server refuses another project's).
 */
export interface RelayTarget {
  port: number;
  token: string;
  project: string;
}

/**
 * The project's server, when it runs `version` of LTM: server.json names it,
 * its process still runs (it is asked nothing yet: the session's first message
 * is the question), and it serves this very project, not the one a copied
 * server.json came from. Another version may offer other tools, or answer
 * them otherwise, than the `ltm mcp` Claude Code started: that session is
 * then served on the store, as without a server.
 */
export function relayTargetOf(paths: StorePaths, version: string): RelayTarget | null {
  const info = readServerInfo(paths);
  if (!info || info.version !== version || !sameDirectory(info.project, paths.project) || serverHolderState(info) === 'dead') return null;
  return { port: info.port, token: info.token, project: paths.project };
}

/** Whether two paths name one directory (the same path, or the same real path). */
export function sameDirectory(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * The project path as the header X-LTM-Project carries it: its UTF-8 bytes,
 * one Latin-1 character each (a header value is bytes; fetch and Node take one
 * character per byte), as the hook script sends it. The server reads them
 * back as UTF-8.
 */
export function projectHeaderValue(project: string): string {
  return Buffer.from(project, 'utf8').toString('latin1');
}

export function writeServerInfo(paths: StorePaths, info: ServerInfo): void {
  writeFileAtomic(paths.server, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600, durable: false });
  fs.chmodSync(paths.server, 0o600);
}

/** Removes server.json only when it still describes this process's server. */
export function removeServerInfo(paths: StorePaths, pid: number, port: number): void {
  const info = readServerInfo(paths);
  if (info && info.pid === pid && info.port === port) fs.rmSync(paths.server, { force: true });
}


/**
 * The running server of a project, or null. A server.json is stale when its
 * process is gone, or when its pid now belongs to something else (pids are
 * reused after a reboot): only a server that answers with its token counts.
 */
export async function runningServerInfo(paths: StorePaths, timeoutMs = 1000): Promise<ServerInfo | null> {
  const info = readServerInfo(paths);
  if (!info || serverHolderState(info) === 'dead') return null;
  return (await serverAnswers(info, timeoutMs)) ? info : null;
}

/** Whether the server that `info` describes answers /health with its token, for its project. */
export async function serverAnswers(info: ServerInfo, timeoutMs = 1000): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${info.port}/health`, {
      headers: { Authorization: `Bearer ${info.token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return false;
    const body = (await response.json()) as { project?: unknown };
    return body.project === info.project;
  } catch {
    return false;
  }
}
