#!/usr/bin/env bash
# Sets up and runs the demo on a fresh machine: installs dependencies (npm ci,
# code-server, Node 24, Chromium; cached in ~/.cache/ltm-test), builds and
# packages the extension, then opens it in a real VS Code (code-server on
# 127.0.0.1:${LTM_DEMO_PORT:-8080}) on a sample project. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
bash scripts/setup-test-deps.sh vscode
npm run build
mkdir -p out
npm run --silent package -- -o out/ltm.vsix
exec node --import tsx scripts/demo.ts out/ltm.vsix
