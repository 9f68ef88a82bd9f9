/**
 * How hooks and terminals find a project's server: `server.json` while it
 * runs, and a persistent identity (token and last port) so that a restarted
 * server answers the Claude Code sessions that knew the old one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { readTextIfExists, writeFileAtomic } from '../core/files';
import type { StorePaths } from '../core/storeFiles';

export interface ServerInfo {
  port: number;
  token: string;
  pid: number;
  version: string;
  started_at: string;
  url: string;
  project: string;
}

const serverInfoSchema = z.object({
  port: z.number().int().min(1).max(65535),
  token: z.string().min(16),
  pid: z.number().int().min(1),
  version: z.string(),
  started_at: z.string(),
  url: z.string(),
  project: z.string(),
});

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
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
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

export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The running server of a project, or null. A server.json is stale when its
 * process is gone, or when its pid now belongs to something else (pids are
 * reused after a reboot): only a server that answers with its token counts.
 */
export async function runningServerInfo(paths: StorePaths, timeoutMs = 1000): Promise<ServerInfo | null> {
  const info = readServerInfo(paths);
  if (!info || !processIsAlive(info.pid)) return null;
  try {
    const response = await fetch(`http://127.0.0.1:${info.port}/health`, {
      headers: { Authorization: `Bearer ${info.token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return null;
    const body = (await response.json()) as { project?: unknown };
    return body.project === info.project ? info : null;
  } catch {
    return null;
  }
}
