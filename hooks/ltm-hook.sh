#!/bin/sh
# LTM hook for Claude Code: forwards the hook payload (stdin) to the project's
# LTM server and, for session_start only, prints its answer for Claude Code.
# It must never slow or break Claude Code: when no server answers it exits 0
# at once and prints nothing. POSIX sh + curl; no jq, no Node.
#   usage: ltm-hook.sh <session_start|pre_tool_use|post_tool_use|pre_compact|session_end>
event=$1
project=${CLAUDE_PROJECT_DIR:-$PWD}
port=${LTM_PORT:-}
token=${LTM_TOKEN:-}

if [ -z "$port" ] || [ -z "$token" ]; then
  info="$project/.claude/ltm/server.json"
  if [ ! -r "$info" ]; then cat >/dev/null 2>&1; exit 0; fi
  # server.json is written by LTM with one key per line.
  port=$(sed -n 's/^[[:space:]]*"port":[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$info" | head -n 1)
  token=$(sed -n 's/^[[:space:]]*"token":[[:space:]]*"\([A-Za-z0-9_-]*\)".*/\1/p' "$info" | head -n 1)
fi
if [ -z "$port" ] || [ -z "$token" ] || ! command -v curl >/dev/null 2>&1; then
  cat >/dev/null 2>&1
  exit 0
fi

answer=$(curl --silent --fail --max-time 2 --connect-timeout 1 --noproxy '*' \
  -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -H "X-LTM-Project: $project" --data-binary @- \
  "http://127.0.0.1:$port/hook/$event" 2>/dev/null) || exit 0

if [ "$event" = session_start ]; then printf '%s\n' "$answer"; fi
exit 0
