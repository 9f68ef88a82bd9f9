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
import * as path from 'node:path';
import { LtmError, errorMessage } from './core/errors';
import { MemoryStore } from './core/store';
import { COMMANDS, COMMON_OPTIONS, UsageError, type Command, type Output } from './cliCommands';
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

export interface CliOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export async function runCli(argv: readonly string[], cwd = process.cwd()): Promise<CliOutput> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    return { stdout: USAGE, stderr: '', exitCode: name ? 0 : 2 };
  }
  if (name === '--version' || name === '-v') return { stdout: `${VERSION}\n`, stderr: '', exitCode: 0 };
  const command = BY_NAME.get(name);
  if (!command) return fail(new UsageError(`unknown command "${name}" (see ltm --help)`), 2);

  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: [...rest], options: { ...COMMON_OPTIONS, ...command.options }, allowPositionals: true, strict: true });
    values = parsed.values as Record<string, string | boolean | undefined>;
    positionals = parsed.positionals;
  } catch (error) {
    return fail(new UsageError(errorMessage(error).split('\n')[0]!), 2);
  }
  if (values.help) return { stdout: USAGE, stderr: '', exitCode: 0 };
  const expected = command.positionals;
  if (command.joinPositionals && positionals.length > 1) positionals = [positionals.join(' ')];
  if (positionals.length !== expected.length) {
    const what = expected.length === 0 ? 'no arguments' : expected.map((p) => `<${p}>`).join(' ');
    return fail(new UsageError(`${name} takes ${what}${positionals.length > expected.length ? `, not "${positionals.slice(expected.length).join(' ')}"` : ''}`), 2);
  }

  const json = Boolean(values.json);
  const input = { projectDir: path.resolve(cwd, typeof values.project === 'string' ? values.project : '.'), version: VERSION, values, positionals };
  if (!command.store) return answer(() => command.run(input), json);
  const store = MemoryStore.open(input.projectDir, { renames: gitRenameLookup(input.projectDir) });
  try {
    return await answer(async () => {
      const out = await command.run(store, input);
      store.flushCaches();
      return out;
    }, json);
  } finally {
    store.dispose();
  }
}

/** What a command printed, or its error as one line: bad arguments and refusals of the engine. Anything else is a bug, and thrown. */
async function answer(run: () => Promise<Output> | Output, json: boolean): Promise<CliOutput> {
  try {
    const out = await run();
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

async function main(): Promise<void> {
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
