/**
 * `ltm`: the engine from a terminal. Every command prints readable text, or
 * with --json the same shapes the MCP tools return. Bad arguments and unknown
 * IDs print one line to stderr, exit non-zero and change nothing.
 *
 * The commands themselves are a table (src/cliCommands.ts); the usage text,
 * the parser and the dispatch here are derived from it.
 */
import { gitRenameLookup } from './servers/gitRenames';
import { parseArgs } from 'node:util';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LtmError, errorMessage } from './core/errors';
import { MemoryStore } from './core/store';
import { COMMANDS, COMMON_OPTIONS, UsageError, type Command, type Options, type Output } from './cliCommands';
import { searchIndexWorkerOptions } from './servers/searchIndexWorkerScript';
// Only `version` is bundled: esbuild drops the rest of the manifest from a named JSON import.
import { version } from '../package.json';

export const VERSION: string = version;

/** Where a command's description starts in `ltm --help`; a longer usage puts it on the next line. */
const DESCRIPTION_COLUMN = 43;

function usageLine({ name, usage, description }: Command): string {
  const head = `  ${usage ? `${name} ${usage}` : name}`;
  return head.length < DESCRIPTION_COLUMN ? `${head.padEnd(DESCRIPTION_COLUMN)}${description}` : `${head}\n${' '.repeat(DESCRIPTION_COLUMN)}${description}`;
}

export const USAGE = `ltm ${VERSION}: long-term memory for Claude Code, kept in <project>/.claude/ltm/

Usage: ltm <command> [arguments] [--project <dir>] [--json]

Commands:
${COMMANDS.map(usageLine).join('\n')}

Options:
  --project <dir>   the project whose .claude/ltm/ to use (default: the current directory)
  --json            print JSON instead of text
  --help, --version
`;

const BY_NAME = new Map(COMMANDS.map((c) => [c.name, c]));

/** `ltm help <command>` and `ltm <command> --help`: its usage, what it does, and where its text options can come from. */
export function commandHelp(command: Command): string {
  const lines = [`Usage: ltm ${[command.name, command.usage].filter(Boolean).join(' ')} [--project <dir>] [--json]`, '', `${command.description[0]!.toUpperCase()}${command.description.slice(1)}.`];
  const inputs = command.textInputs ?? [];
  if (inputs.length > 0) {
    lines.push('', `${inputs.map((n) => `--${n}`).join(' and ')} can also come from a file (${inputs.map((n) => `--${n}-file F`).join(', ')}) or from standard input (--${inputs[0]} -).`);
  }
  lines.push('', 'Options of every command:', '  --project <dir>   the project whose .claude/ltm/ to use (default: the current directory)', '  --json            print JSON instead of text');
  return `${lines.join('\n')}\n`;
}

/** Where a command's text can come from besides its argument: the terminal or a pipe, read once. */
export interface CliIo {
  readStdin: () => string;
}

const PROCESS_IO: CliIo = { readStdin: () => fs.readFileSync(0, 'utf8') };

export interface CliOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export async function runCli(argv: readonly string[], cwd = process.cwd(), io: CliIo = PROCESS_IO): Promise<CliOutput> {
  const [name, ...rest] = argv;
  if (name === 'help' && rest.length > 0) {
    const asked = BY_NAME.get(rest[0]!);
    if (!asked || rest.length > 1) return fail(new UsageError(`help takes one command name (see ltm --help), not "${rest.join(' ')}"`), 2);
    return { stdout: commandHelp(asked), stderr: '', exitCode: 0 };
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    return { stdout: USAGE, stderr: '', exitCode: name ? 0 : 2 };
  }
  if (name === '--version' || name === '-v') return { stdout: `${VERSION}\n`, stderr: '', exitCode: 0 };
  const command = BY_NAME.get(name);
  if (!command) return fail(new UsageError(`unknown command "${name}" (see ltm --help)`), 2);

  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const options = { ...COMMON_OPTIONS, ...command.options };
    const parsed = parseArgs({ args: valuesStartingWithDash(rest, options), options, allowPositionals: true, strict: true });
    values = parsed.values as Record<string, string | boolean | undefined>;
    positionals = parsed.positionals;
  } catch (error) {
    return fail(new UsageError(errorMessage(error).split('\n')[0]!), 2);
  }
  if (values.help) return { stdout: commandHelp(command), stderr: '', exitCode: 0 };
  const expected = command.positionals;
  if (command.joinPositionals && positionals.length > 1) positionals = [positionals.join(' ')];
  if (positionals.length !== expected.length) {
    const what = expected.length === 0 ? 'no arguments' : expected.map((p) => `<${p}>`).join(' ');
    return fail(new UsageError(`${name} takes ${what}${positionals.length > expected.length ? `, not "${positionals.slice(expected.length).join(' ')}"` : ''}`), 2);
  }

  const json = Boolean(values.json);
  const projectDir = path.resolve(cwd, typeof values.project === 'string' ? values.project : '.');
  if (!isFolder(projectDir)) return fail(new UsageError(`no such folder: ${projectDir}`), 2);
  try {
    readTextInputs(command, values, cwd, io);
  } catch (error) {
    if (error instanceof UsageError) return fail(error, 2);
    throw error;
  }
  const input = { projectDir, version: VERSION, values, positionals };
  if (!command.store) return answer(() => command.run(input), json);
  let store: MemoryStore | undefined;
  try {
    // Opened inside answer(): a store file that cannot be read is the engine's error, told in one line.
    return await answer(async () => {
      store = await MemoryStore.openAsync(input.projectDir, { renames: gitRenameLookup(input.projectDir), ...(command.searches ? searchIndexWorkerOptions() : {}) });
      const out = await command.run(store, input);
      store.flushCaches();
      return out;
    }, json);
  } finally {
    store?.dispose();
  }
}

/**
 * `--limit -5` as `--limit=-5`. parseArgs refuses a value that starts with
 * '-' as "ambiguous", which hides what is wrong (a negative number gets its
 * own clear message from the command) and refuses `--content -` (standard
 * input). A following word that is one of the options stays an option: a
 * value forgotten before it is still reported as missing.
 */
function valuesStartingWithDash(args: readonly string[], options: Options): string[] {
  const isOption = (arg: string) => {
    if (arg.startsWith('--')) return Object.hasOwn(options, arg.slice(2).split('=')[0]!);
    return Object.values(options).some((o) => o.short !== undefined && arg === `-${o.short}`);
  };
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const option = arg.startsWith('--') && !arg.includes('=') ? options[arg.slice(2)] : undefined;
    if (option && Object.hasOwn(options, arg.slice(2)) && option.type === 'string' && next !== undefined && next.startsWith('-') && !isOption(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

function isFolder(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A text option given as `--content-file F` or `--content -` becomes the
 * text itself, so that content of any size (argv holds ~128 KB) and text
 * with characters a shell would mangle can be stored. Standard input is read
 * once, so only one option may ask for it.
 */
function readTextInputs(command: Command, values: Record<string, string | boolean | undefined>, cwd: string, io: CliIo): void {
  let stdinUsedBy: string | undefined;
  for (const name of command.textInputs ?? []) {
    const fileOption = `${name}-file`;
    const file = values[fileOption];
    const given = values[name];
    if (typeof file === 'string') {
      if (given !== undefined) throw new UsageError(`use either --${name} or --${fileOption}, not both`);
      try {
        values[name] = withoutFinalNewline(fs.readFileSync(path.resolve(cwd, file), 'utf8'));
      } catch (error) {
        throw new UsageError(`cannot read --${fileOption} ${JSON.stringify(file)}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}`);
      }
    } else if (given === '-') {
      if (stdinUsedBy) throw new UsageError(`only one option can read standard input (--${stdinUsedBy} - and --${name} -)`);
      stdinUsedBy = name;
      values[name] = withoutFinalNewline(io.readStdin());
    }
  }
}

/** A file's or a pipe's last line ending is not part of the text, as `$(cat file)` would drop it. */
function withoutFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/** What a command printed, or its error as one line: bad arguments and refusals of the engine. Anything else is a bug, and thrown. */
async function answer(run: () => Promise<Output> | Output, json: boolean): Promise<CliOutput> {
  try {
    const out = await run();
    if (out.raw) return { stdout: out.text, stderr: '', exitCode: out.exitCode ?? 0 };
    return { stdout: `${json && !out.textOnly ? JSON.stringify(out.json, null, 2) : out.text}\n`, stderr: '', exitCode: out.exitCode ?? 0 };
  } catch (error) {
    if (error instanceof UsageError) return fail(error, 2);
    if (error instanceof LtmError) return fail(error, error.code === 'invalid_input' ? 2 : 1);
    throw error;
  }
}

/** One line, whatever the message quotes back (a value may hold newlines). */
function fail(error: Error, exitCode: number): CliOutput {
  return { stdout: '', stderr: `ltm: ${error.message.replace(/\r?\n/g, '\\n')}\n`, exitCode };
}

/**
 * A reader that went away (`ltm list | head -1`, a script that read `ltm serve`'s
 * first line and closed the pipe) is not an error of ltm's: what was left to
 * print is dropped and the command ends as it would have. Unhandled, the
 * stream's EPIPE killed the process with a stack trace and exit code 1 (a
 * server at its "stopped" line, after it had stopped cleanly).
 */
function ignoreClosedReader(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/** The command line as a process runs it (dist/cli.js, the launcher, calls this). */
export async function main(): Promise<void> {
  ignoreClosedReader(process.stdout);
  try {
    const out = await runCli(process.argv.slice(2));
    if (out.stdout) process.stdout.write(out.stdout);
    if (out.stderr) process.stderr.write(out.stderr);
    process.exitCode = out.exitCode;
  } catch (error) {
    process.stderr.write(`ltm: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
