/**
 * The shell LTM's command hooks run hooks/ltm-hook.sh with. Under bash 4.1 or
 * later the script speaks HTTP itself over bash's /dev/tcp, so a hook starts
 * no process besides the shell (curl's start was most of a hook's cost); under
 * an older bash (macOS's 3.2) or plain sh it runs curl. A system without bash
 * on its PATH (a minimal container) gets sh.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export type HookShell = 'bash' | 'sh';

/**
 * How a hook command starts each shell. bash in POSIX mode reads no
 * $BASH_ENV (a startup file whose output would reach Claude Code as the
 * hook's answer), as sh reads no $ENV; /dev/tcp and `read -N` work the same.
 */
export const SHELL_COMMANDS: Readonly<Record<HookShell, string>> = { bash: 'bash --posix', sh: 'sh' };

/** How command hooks run on a machine: PowerShell on Windows, elsewhere `shell` with the script. */
export interface CommandHost {
  platform: NodeJS.Platform;
  shell: HookShell;
}

/** bash when an executable `bash` is on `searchPath` (PATH by default), else sh. */
export function hookShell(searchPath = process.env.PATH ?? ''): HookShell {
  for (const dir of searchPath.split(path.delimiter)) {
    // An empty entry means the current directory: never a place to take a shell from.
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, 'bash');
    try {
      if (!fs.statSync(candidate).isFile()) continue;
      fs.accessSync(candidate, fs.constants.X_OK);
      return 'bash';
    } catch {
      // Not there, or not executable: the next directory.
    }
  }
  return 'sh';
}

/** This machine's platform and hook shell, for the hooks LTM writes now. */
export function commandHostNow(): CommandHost {
  return { platform: process.platform, shell: process.platform === 'win32' ? 'sh' : hookShell() };
}
