#!/bin/sh
# LTM hook for Claude Code: forwards the hook payload (stdin) to the project's
# LTM server and prints its answer for Claude Code when it gives context.
# It must never slow or break Claude Code: when no server answers it exits 0
# at once and prints nothing; no answer is waited for longer than 2 s.
#   usage: ltm-hook.sh <session_start|user_prompt_submit|subagent_start|pre_tool_use|post_tool_use|pre_compact|session_end> [--unless-project-hooks]
#
# Two ways to the server, one script:
# - run by bash 4.1 or later (`ltm init` writes `bash ...` where there is a
#   bash), it speaks HTTP itself over bash's /dev/tcp: no process is started
#   at all, which is most of what a hook costs. Only payloads over
#   TCP_MAX_BYTES go through curl: a write that large could block on a server
#   that accepts but never reads, and only curl can bound it.
# - run by any other sh (dash, bash 3.2 on macOS), it runs curl.
# No jq, no Node, no sed.
#
# The bearer token never appears on a command line (any local user can read
# /proc/<pid>/cmdline): bash writes it to the socket with its printf builtin;
# curl gets the Authorization header from a config read on file descriptor 3,
# fed by a here-document (a pipe, or a file the shell unlinks at once; no file
# is left behind). Only builtins see the token.
# X-LTM-Project stays on curl's command line: it is not secret, and curl's
# config syntax would need escaping of quotes and backslashes in the path.
# -q (first): no ~/.curlrc, whose options (trace files, headers) would apply.
# An empty Expect: no wait for a `100 Continue` before a large payload.
# Where /dev/fd/3 cannot be opened, curl stops (exit 26) and the hook exits 0
# silently, as when no server answers (reading what curl left of stdin).
event=$1
project=${CLAUDE_PROJECT_DIR:-$PWD}
port=${LTM_PORT:-}
token=${LTM_TOKEN:-}
# The largest payload sent over /dev/tcp: it fits in the socket buffers of a
# loopback connection, so writing it never blocks. The server takes up to 1 MiB.
TCP_MAX_BYTES=65536

tcp=
case ${BASH_VERSION:-} in 4.[1-9]* | [5-9].* | [1-9][0-9]*) tcp=1 ;; esac
payload=
if [ -n "$tcp" ]; then
  # Bytes, not characters: ${#payload} is the Content-Length, multibyte text included.
  LC_ALL=C
  # The whole payload, as it is (-N: no delimiter, no IFS splitting), in large reads.
  IFS= read -r -N $((TCP_MAX_BYTES + 1)) payload
fi

# What was not read of stdin yet: read to its end, so that Claude Code's write never fails.
drain() {
  if [ -n "$tcp" ]; then
    while IFS= read -r -N 65536 _; do :; done
  else
    cat >/dev/null 2>&1
  fi
}

# Run by the Claude Code plugin (--unless-project-hooks): a project whose own settings run LTM's hook
# for this event (`ltm init` writes .claude/settings.local.json; a team may share settings.json) is
# left to that hook, or the session would be given everything twice. Read with builtins only.
if [ "${2:-}" = --unless-project-hooks ]; then
  case $event in '' | *[!a-z_]*) drain; exit 0 ;; esac
  for settings in "$project/.claude/settings.local.json" "$project/.claude/settings.json"; do
    [ -r "$settings" ] || continue
    while IFS= read -r line || [ -n "$line" ]; do
      case $line in
        *'/.claude/ltm/hooks/ltm-hook.'*" $event\""* | *'"http://127.0.0.1:'*"/hook/$event"[?\"]*) drain; exit 0 ;;
      esac
    done <"$settings"
  done
fi

if [ -z "$port" ] || [ -z "$token" ]; then
  info="$project/.claude/ltm/server.json"
  if [ ! -r "$info" ]; then drain; exit 0; fi
  # server.json is written by LTM with one key per line: `  "port": 41234,` and `  "token": "…",`.
  port= token=
  while IFS= read -r line; do
    case $line in
      *'"port":'*)
        value=${line#*'"port":'}
        value=${value#"${value%%[! ]*}"}
        [ -n "$port" ] || port=${value%%[!0-9]*}
        ;;
      *'"token":'*)
        value=${line#*'"token":'}
        value=${value#"${value%%[! ]*}"}
        case $value in '"'*) value=${value#'"'} ;; *) value= ;; esac
        [ -n "$token" ] || token=${value%%'"'*}
        ;;
    esac
  done <"$info"
fi
# The port must be a number, the token base64url and the event a name, so
# that none can change the request, the URL or the curl config below.
case $port in '' | *[!0-9]*) port= ;; esac
case $token in '' | *[!A-Za-z0-9_-]*) token= ;; esac
case $event in '' | *[!a-z_]*) port= ;; esac
if [ -z "$port" ] || [ -z "$token" ]; then drain; exit 0; fi

# Prints the answer's body for Claude Code when it holds something: `{}` gives nothing.
print_answer() {
  case $1 in '' | '{}') ;; *) printf '%s\n' "$1" ;; esac
}

if [ -n "$tcp" ] && [ ${#payload} -le $TCP_MAX_BYTES ]; then
  # A project path with a line break would end the header early: such a hook is dropped.
  case $project in *$'\r'* | *$'\n'*) exit 0 ;; esac
  # Connection refused (no server): at once, silently. `command`: in POSIX mode a
  # failed redirection of the special builtin exec would end the script with status 1.
  { command exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || exit 0
  # A server that closes early must not kill the hook with SIGPIPE: the write fails instead.
  trap '' PIPE
  # Connection: close, so that the answer ends with the connection (the server
  # sends Content-Length; no chunked answer, no keep-alive to wait out).
  printf 'POST /hook/%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nX-LTM-Project: %s\r\nContent-Length: %s\r\nConnection: close\r\n\r\n%s' \
    "$event" "$port" "$token" "$project" "${#payload}" "$payload" >&3 2>/dev/null || exit 0
  # At most 2 s for the whole answer; EOF (status 1) is the normal end.
  IFS= read -r -N 2097152 -t 2 answer <&3
  [ $? -le 1 ] || exit 0
  head=${answer%%$'\r\n\r\n'*}
  body=${answer#*$'\r\n\r\n'}
  [ "$head" != "$answer" ] || exit 0
  case $head in 'HTTP/1.'[01]' 200 '*) ;; *) exit 0 ;; esac
  case $head in *$'\n'[Tt][Rr][Aa][Nn][Ss][Ff][Ee][Rr]-[Ee][Nn][Cc][Oo][Dd][Ii][Nn][Gg]:*) exit 0 ;; esac
  case $head in
    *$'\n'[Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Ll][Ee][Nn][Gg][Tt][Hh]:*)
      length=${head#*$'\n'[Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Ll][Ee][Nn][Gg][Tt][Hh]:}
      length=${length%%$'\r'*}
      length=${length#"${length%%[! ]*}"}
      # A cut answer (the server stopped mid-way) is no answer.
      [ "$length" = "${#body}" ] || exit 0
      ;;
  esac
  print_answer "$body"
  exit 0
fi

command -v curl >/dev/null 2>&1 || { drain; exit 0; }

post_with_curl() {
  curl -q --silent --fail --max-time 2 --connect-timeout 1 --noproxy '*' \
    -K /dev/fd/3 -H 'Content-Type: application/json' -H 'Expect:' \
    -H "X-LTM-Project: $project" --data-binary @- \
    "http://127.0.0.1:$port/hook/$event" 2>/dev/null 3<<EOF
header = "Authorization: Bearer $token"
EOF
}

if [ -n "$payload" ]; then
  # bash with a payload over TCP_MAX_BYTES: what was read, then the rest of stdin.
  answer=$({ printf '%s' "$payload"; cat; } | post_with_curl) || { drain; exit 0; }
else
  answer=$(post_with_curl) || { drain; exit 0; }
fi
print_answer "$answer"
exit 0
