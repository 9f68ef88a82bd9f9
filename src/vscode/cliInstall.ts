/**
 * "LTM: Install command-line tool": `ltm` in a terminal, run by VS Code's own
 * runtime from the CLI this extension ships (see src/servers/cliShim.ts), and
 * kept pointing at this extension after updates.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeError } from '../core/errors';
import { defaultCliShimFile, installCliShim, refreshCliShim, type CliShimTarget } from '../servers/cliShim';
import { CommandId } from './commandIds';

function shimTarget(context: vscode.ExtensionContext): CliShimTarget {
  return { runtime: process.execPath, cli: context.asAbsolutePath(path.join('dist', 'cli.js')) };
}

/**
 * The command, and at activation the refresh of a script installed by an
 * earlier version. The command takes an optional file path (tests; the
 * palette uses ~/.local/bin/ltm) and returns where it installed.
 */
export function registerCliInstall(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): vscode.Disposable {
  try {
    if (refreshCliShim(defaultCliShimFile(), shimTarget(context))) log.info(`${defaultCliShimFile()}: now runs this version of LTM`);
  } catch (error) {
    log.warn(`could not refresh ${defaultCliShimFile()}: ${describeError(error)}`);
  }
  return vscode.commands.registerCommand(CommandId.InstallCli, async (file?: unknown) => {
    const target = typeof file === 'string' ? file : defaultCliShimFile();
    try {
      const installed = installCliShim(target, shimTarget(context));
      log.info(`installed the command-line tool at ${installed.file}`);
      const dir = path.dirname(installed.file);
      if (installed.onPath) {
        void vscode.window.showInformationMessage(`LTM: the \`ltm\` command is installed (${installed.file}). Open a new terminal and run \`ltm --help\`.`);
      } else {
        const line = `export PATH="${dir}:$PATH"`;
        void vscode.window.showInformationMessage(`LTM: \`ltm\` is installed at ${installed.file}, but ${dir} is not on your PATH. Add it in your shell's profile: ${line}`, 'Copy').then((c) => c && vscode.env.clipboard.writeText(line));
      }
      return installed;
    } catch (error) {
      const message = describeError(error);
      log.error(`${CommandId.InstallCli}: ${message}`);
      void vscode.window.showErrorMessage(`LTM: ${message}`);
      return undefined;
    }
  });
}
