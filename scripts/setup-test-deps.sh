#!/usr/bin/env bash
# Installs everything the tests need that npm ci does not: the pinned Claude
# Code CLI (for the end-to-end tests). Cached under $LTM_TEST_CACHE
# (default ~/.cache/ltm-test) so later runs reuse it.
set -euo pipefail
CACHE=${LTM_TEST_CACHE:-$HOME/.cache/ltm-test}
CLAUDE_CODE_VERSION=2.1.197   # the last release whose engines allow Node 20
mkdir -p "$CACHE"

claude_dir="$CACHE/claude-code-$CLAUDE_CODE_VERSION"
if ! "$claude_dir/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION"; then
  echo "setup: installing Claude Code $CLAUDE_CODE_VERSION into $claude_dir"
  rm -rf "$claude_dir"
  mkdir -p "$claude_dir"
  echo '{"name":"ltm-test-claude-code","private":true}' > "$claude_dir/package.json"
  # Its postinstall links the native binary: scripts must run.
  npm install --prefix "$claude_dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
fi
echo "setup: Claude Code $("$claude_dir/node_modules/.bin/claude" --version)"
