// Runs the real CLI (the bundle dist/cli.js launches, loaded as it does it) at a given moment, for
// exposure.test.ts: two of these started together load the CLI, then both wait
// here for the same instant (ms since the epoch) and run `ltm <args>`, so that
// two `ltm serve` really start at once, not one bundle-load apart.
//   node serveAtOnce.cjs <path/to/cli.js> <startAt> <ltm args...>
const [cliPath, startAt, ...args] = process.argv.slice(2);
// dist/cli.js is the launcher: loaded as a module, it gives the bundle as `ltm` runs it (code cache included).
const launcher = require(cliPath);
const { bundle, codeCache } = launcher.bundleFiles();
const cli = launcher.runBundle(launcher.compileBundle(bundle, codeCache).script, bundle);
while (Date.now() < Number(startAt)) {
  // busy-wait: a timer would let the other process run ahead
}
cli.runCli(args).then(
  (out) => {
    if (out.stdout) process.stdout.write(out.stdout);
    if (out.stderr) process.stderr.write(out.stderr);
    process.exitCode = out.exitCode;
  },
  (error) => {
    process.stderr.write(`ltm: unexpected error: ${error && error.stack}\n`);
    process.exitCode = 1;
  },
);
