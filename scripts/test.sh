#!/usr/bin/env bash
# Sets up and runs every test on a fresh machine:
#   npm ci, the pinned Claude Code, code-server + Node 24 + Chromium (cached in
#   ~/.cache/ltm-test), then type-check, lint, build, unit and server tests,
#   and the end-to-end tests (real Claude Code, real VS Code, the packaged .vsix).
# Closes with one line: "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

summary=$(mktemp)
export LTM_TEST_SUMMARY="$summary"
report() {
  local status=$?
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").filter(Boolean).map(JSON.parse);
    const sum = (k) => lines.reduce((n, l) => n + l[k], 0);
    const failed = sum("failures") + (Number(process.argv[2]) !== 0 && sum("failures") === 0 ? 1 : 0);
    console.log(`\n${sum("passes")} passed, ${failed} failed, ${sum("pending")} skipped`);
  ' "$summary" "$status"
  rm -f "$summary"
  exit "$status"
}
trap report EXIT

# Dependencies: reinstalled when package-lock.json changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
bash scripts/setup-test-deps.sh

npm test
