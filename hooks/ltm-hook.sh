#!/bin/sh
# LTM hook for Claude Code: forwards the hook payload (stdin) to the project's
# LTM server and, for the events that give context, prints its answer for Claude Code.
# It must never slow or break Claude Code: when no server answers it exits 0
# at once and prints nothing. POSIX sh + curl; no jq, no Node.
#   usage: ltm-hook.sh <session_start|user_prompt_submit|subagent_start|pre_tool_use|post_tool_use|pre_compact|session_end>
#
# The bearer token never appears on a command line (any local user can read
# /proc/<pid>/cmdline): curl gets the Authorization header from a config read
# on file descriptor 3, fed by a here-document (a pipe, or a file the shell
# unlinks at once; no file is left behind). Only builtins see the token.
# X-LTM-Project stays on curl's command line: it is not secret, and curl's
# config syntax would need escaping of quotes and backslashes in the path.
# -q (first): no ~/.curlrc, whose options (trace files, headers) would apply.
# Where /dev/fd/3 cannot be opened, curl stops (exit 26) and the hook exits 0
# silently, as when no server answers (reading what curl left of stdin).
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
# The port must be a number and the token base64url, so that neither can
# change the URL or the curl config below.
case $port in '' | *[!0-9]*) port= ;; esac
case $token in '' | *[!A-Za-z0-9_-]*) token= ;; esac
if [ -z "$port" ] || [ -z "$token" ] || ! command -v curl >/dev/null 2>&1; then
  cat >/dev/null 2>&1
  exit 0
fi

answer=$(curl -q --silent --fail --max-time 2 --connect-timeout 1 --noproxy '*' \
  -K /dev/fd/3 -H 'Content-Type: application/json' \
  -H "X-LTM-Project: $project" --data-binary @- \
  "http://127.0.0.1:$port/hook/$event" 2>/dev/null 3<<EOF
header = "Authorization: Bearer $token"
EOF
) || { cat >/dev/null 2>&1; exit 0; }

case $event in session_start | user_prompt_submit | subagent_start) printf '%s\n' "$answer" ;; esac
exit 0
