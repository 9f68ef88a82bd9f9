/**
 * What the extension-host test files share: the extension's ID, the extension
 * ready to test, a folder of their own, and waiting for a condition the UI
 * reaches asynchronously.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { initStoreFiles, MemoryStore } from '../../../src/core/store';
import { storePaths } from '../../../src/core/storeFiles';
import type { LtmApi } from '../../../src/extension';
import type { MemoryFields } from '../../../src/shared/protocol';
import { fieldsOf } from '../../../src/vscode/memoryEdit';

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

/** The extension, activated, once its folders' stores are open and their servers started. */
export async function readyApi(): Promise<LtmApi> {
  const api = await vscode.extensions.getExtension<LtmApi>(EXTENSION_ID)!.activate();
  await api.ready;
  return api;
}

/** A new folder beside the test workspace's first one, with an initialized store; the test adds it to the workspace. */
export function newProjectFolder(prefix: string): string {
  const first = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const project = fs.mkdtempSync(path.join(path.dirname(first), prefix));
  initStoreFiles(storePaths(project));
  return project;
}

/** Where `dir` is among the workspace's folders (-1: not open). */
export function folderIndex(dir: string): number {
  return (vscode.workspace.workspaceFolders ?? []).findIndex((f) => f.uri.fsPath === dir);
}

/** Closes a folder newProjectFolder made (when open) and deletes it. */
export async function removeProjectFolder(api: LtmApi, project: string | undefined): Promise<void> {
  if (!project) return;
  if (folderIndex(project) >= 0) {
    vscode.workspace.updateWorkspaceFolders(folderIndex(project), 1);
    await waitFor(() => !api.folders().some((f) => f.path === project), 'the folder to be closed').catch(() => undefined);
  }
  fs.rmSync(project, { recursive: true, force: true });
}

/** A memory's editable fields as its file on disk has them now. */
export function fieldsOnDisk(project: string, id: string): MemoryFields {
  const store = MemoryStore.open(project);
  try {
    return fieldsOf(store.peek(id));
  } finally {
    store.dispose();
  }
}

/**
 * Another process changing a project's memories: the real `ltm` CLI. Not spawnSync: the extension host must go on
 * running meanwhile (its server may hold the store's lock for a moment, writing index.json).
 */
export async function runCli(project: string, ...args: string[]): Promise<void> {
  const cliPath = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'dist', 'cli.js');
  const r = await new Promise<{ status: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [cliPath, ...args, '--project', project], { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (status) => resolve({ status, output }));
  });
  assert.equal(r.status, 0, `ltm ${args.join(' ')}: ${r.output}`);
}
