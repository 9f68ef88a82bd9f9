# LTM hook for Claude Code on Windows: the PowerShell twin of ltm-hook.sh.
# Forwards the hook payload (stdin) to the project's LTM server; prints only
# the answers of session_start, user_prompt_submit and subagent_start. When no server answers it exits 0 at once, silently.
#   usage: ltm-hook.ps1 <session_start|user_prompt_submit|subagent_start|pre_tool_use|post_tool_use|pre_compact|session_end>
param([string]$Event)
$ErrorActionPreference = 'SilentlyContinue'
$payload = [Console]::In.ReadToEnd()
$project = if ($env:CLAUDE_PROJECT_DIR) { $env:CLAUDE_PROJECT_DIR } else { (Get-Location).Path }
$port = $env:LTM_PORT
$token = $env:LTM_TOKEN
if (-not $port -or -not $token) {
  $info = Join-Path $project '.claude/ltm/server.json'
  if (-not (Test-Path $info)) { exit 0 }
  try { $server = Get-Content -Raw $info | ConvertFrom-Json } catch { exit 0 }
  $port = $server.port
  $token = $server.token
}
if (-not $port -or -not $token) { exit 0 }
try {
  $answer = Invoke-RestMethod -Method Post -Uri "http://127.0.0.1:$port/hook/$Event" -TimeoutSec 2 `
    -Headers @{ Authorization = "Bearer $token"; 'X-LTM-Project' = $project } `
    -ContentType 'application/json' -Body ([System.Text.Encoding]::UTF8.GetBytes($payload))
} catch { exit 0 }
if (($Event -eq 'session_start' -or $Event -eq 'user_prompt_submit' -or $Event -eq 'subagent_start') -and $answer) { $answer | ConvertTo-Json -Depth 10 -Compress }
exit 0
