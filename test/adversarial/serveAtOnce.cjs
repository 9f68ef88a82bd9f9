// Runs the real CLI (dist/cli.js, loaded as a module) at a given moment, for
// exposure.test.ts: two of these started together load the CLI, then both wait
// here for the same instant (ms since the epoch) and run `ltm <args>`, so that
// two `ltm serve` really start at once, not one bundle-load apart.
//   node serveAtOnce.cjs <path/to/cli.js> <startAt> <ltm args...>
const [cliPath, startAt, ...args] = process.argv.slice(2);
const cli = require(cliPath);
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
