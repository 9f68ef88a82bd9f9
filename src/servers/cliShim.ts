/**
 * "LTM: Install command-line tool": a small script named `ltm` in a folder on
 * the PATH that runs the CLI the extension ships (dist/cli.js) with the
 * runtime VS Code itself runs on, as VS Code's own `code` command does, so
 * that a VS Code user needs neither Node nor npm to have `ltm` in a terminal.
 *
 * The script names the extension's folder, which changes when the extension
 * is updated: the extension writes it again at activation (`refreshCliShim`),
 * and only when it is a script LTM wrote (its mark) and its text differs.
 * A file of another origin at that path (an `ltm` installed with npm, say) is
 * never replaced.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LtmError } from '../core/errors';
import { writeFileAtomic } from '../core/files';

/** In every script LTM writes, on its second line: how a later version recognises its own. */
export const CLI_SHIM_MARK = 'Installed by LTM (LTM: Install command-line tool)';

export interface CliShimTarget {
  /** The executable to run: VS Code's Electron binary or code-server's Node (process.execPath in the extension host). */
  runtime: string;
  /** The bundled CLI: <extension>/dist/cli.js. */
  cli: string;
}

export type ShimPlatform = 'win32' | 'posix';

function platformOf(platform: NodeJS.Platform): ShimPlatform {
  return platform === 'win32' ? 'win32' : 'posix';
}

/** Where the script goes by default: ~/.local/bin (on the PATH of most Linux desktops and shells), as ltm or ltm.cmd. */
export function defaultCliShimFile(home = os.homedir(), platform: NodeJS.Platform = process.platform): string {
  return path.join(home, '.local', 'bin', platformOf(platform) === 'win32' ? 'ltm.cmd' : 'ltm');
}

/** A POSIX shell word that is exactly `text`, whatever it holds. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The script. ELECTRON_RUN_AS_NODE makes VS Code's Electron binary behave as
 * Node; code-server's runtime is Node already and ignores it.
 */
export function cliShimText(target: CliShimTarget, platform: ShimPlatform): string {
  if (platform === 'win32') {
    if (/["%\r\n]/.test(target.runtime + target.cli)) throw new LtmError('invalid_input', `cannot write a command script for a path with " or %: ${target.cli}`);
    return ['@echo off', `rem ${CLI_SHIM_MARK}`, 'setlocal', 'set ELECTRON_RUN_AS_NODE=1', `"${target.runtime}" "${target.cli}" %*`, ''].join('\r\n');
  }
  return ['#!/bin/sh', `# ${CLI_SHIM_MARK}`, `ELECTRON_RUN_AS_NODE=1 exec ${shellQuote(target.runtime)} ${shellQuote(target.cli)} "$@"`, ''].join('\n');
}

function readIfExists(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function isOurs(text: string): boolean {
  return text.split(/\r?\n/, 3).some((line) => line.includes(CLI_SHIM_MARK));
}

/** Whether `dir` is one of the PATH's folders. */
export function isOnPath(dir: string, pathVariable = process.env.PATH ?? ''): boolean {
  const wanted = path.resolve(dir);
  return pathVariable.split(path.delimiter).some((entry) => entry !== '' && path.resolve(entry) === wanted);
}

export interface CliShimInstall {
  file: string;
  /** The folder is on the PATH of the process that installed it (VS Code's): `ltm` runs by name in a new terminal. */
  onPath: boolean;
  /** Replaced a script an earlier LTM wrote (another extension folder). */
  replaced: boolean;
}

/** Writes the script at `file` (atomically, executable), refusing to replace a file LTM did not write. */
export function installCliShim(file: string, target: CliShimTarget, platform: NodeJS.Platform = process.platform): CliShimInstall {
  const existing = readIfExists(file);
  if (existing !== null && !isOurs(existing)) {
    throw new LtmError('busy', `${file} already exists and was not installed by LTM; remove it first, or keep using it`);
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, cliShimText(target, platformOf(platform)), { mode: 0o755 });
  fs.chmodSync(file, 0o755);
  return { file, onPath: isOnPath(path.dirname(file)), replaced: existing !== null };
}

/** At activation: a script LTM wrote earlier points at this extension again. Returns whether it was rewritten. */
export function refreshCliShim(file: string, target: CliShimTarget, platform: NodeJS.Platform = process.platform): boolean {
  const existing = readIfExists(file);
  const wanted = cliShimText(target, platformOf(platform));
  if (existing === null || !isOurs(existing) || existing === wanted) return false;
  writeFileAtomic(file, wanted, { mode: 0o755 });
  fs.chmodSync(file, 0o755);
  return true;
}
