/**
 * What `ltm init` writes into a project for Claude Code: slash commands and
 * the CLAUDE.md block. Each carries a marker so that `ltm uninit`
 * removes exactly these and nothing a person wrote.
 */
import { PROJECT_TOOL_PREFIX } from '../shared/toolNames';

export const MANAGED_MARKER = '<!-- ltm:managed — installed by `ltm init`; `ltm uninit` removes this file -->';
export const CLAUDE_MD_BEGIN = '<!-- LTM:BEGIN — managed by LTM; `ltm init` replaces and `ltm uninit` removes this block -->';
export const CLAUDE_MD_END = '<!-- LTM:END -->';

// Claude Code passes the tools' structured answers to the model, so ask for a faithful presentation.
const SHOW_AS_IS = 'Present the tool\'s answer to the user faithfully and readably (IDs, topics, counts as they are); add nothing, leave nothing out.';

/**
 * The slash commands, for the tool names of one setup (see toolNames.ts):
 * `ltm init` writes them with its marker, the plugin ships them without (a
 * plugin's files are Claude Code's to remove).
 */
export function slashCommands(toolPrefix: string, marker: string | null): Record<string, string> {
  const m = marker === null ? '' : `${marker}\n`;
  return {
  'remember.md': `---
description: Store a long-term memory for this project (LTM)
argument-hint: "[topic]"
---
${m}Store a long-term memory with the \`${toolPrefix}store_memory\` tool.

Topic given by the user: $ARGUMENTS

- If no topic was given, ask the user what to remember and for a short topic.
- Write \`content\` as a self-contained note a future session can act on: the problem, what was tried, the cause, the fix, and where in the code it applies.
- Add a one-sentence \`summary\`, and \`keywords\`: a few other words a later search might use (the symptom as a user would put it, synonyms, the error's name).
- If it is about specific code, pass \`anchors\` (project files, each maybe with lines: \`src/db/pool.ts#L10-24\`).
- If the user gave tags, pass them as \`tags\`; otherwise set \`auto_tag: true\`. Use \`importance:critical\` only when the user says it must never be forgotten.
- Never put secrets (keys, tokens, passwords) in a memory.

${SHOW_AS_IS}
`,
  'recall.md': `---
description: Search long-term memories (LTM); --archives or --all to include archived ones
argument-hint: "[--archives | --all] <query>"
---
${m}Search long-term memories for: $ARGUMENTS

- If the arguments start with \`--archives\`, call \`${toolPrefix}search_archives\` with the rest as the query.
- If they start with \`--all\`, call \`${toolPrefix}recall\` with \`scope: "all"\` and the rest as the query.
- Otherwise call \`${toolPrefix}recall\` with the arguments as the query.
- If nothing was given, ask what to search for.

${SHOW_AS_IS} Then, if a result looks relevant, offer to open it with \`${toolPrefix}get_memory\`.
`,
  'forget.md': `---
description: Forget a long-term memory by ID (LTM); its text stays restorable in the archive
argument-hint: "<memory id> [--purge]"
---
${m}Forget the long-term memory: $ARGUMENTS

- The first argument is a memory ID such as \`mem_1a2b3c4d\`. If none was given, ask for it (\`/recall\` finds IDs).
- Call \`${toolPrefix}forget\` with that \`id\`. Only if the user wrote \`--purge\` pass \`purge: true\`, after confirming that the text will be deleted for good.

${SHOW_AS_IS}
`,
  'ltm.md': `---
description: Long-term memory (LTM) status and maintenance — status, help, list, check, fix, restore
argument-hint: "[status | help | list [--tag T] [--phase N] [--archives] | check | fix [--clean-archives] | restore <id> [importance]]"
---
${m}Run the LTM subcommand given in: $ARGUMENTS

- (nothing) or \`status\`: call \`${toolPrefix}ltm_status\`.
- \`help\`: list these subcommands and the commands /remember, /recall and /forget, one line each.
- \`list\`: call \`${toolPrefix}list_memories\`, passing \`tag\` for \`--tag T\`, \`phase\` for \`--phase N\`, and \`phase: 3\` for \`--archives\`.
- \`check\`: call \`${toolPrefix}ltm_check\`.
- \`fix\`: call \`${toolPrefix}ltm_fix\`; pass \`clean_orphaned_archives: true\` only for \`--clean-archives\`.
- \`restore <id> [critical|important|normal|low]\`: call \`${toolPrefix}restore_memory\` with \`memory_id\` and, if given, \`importance\`.

${SHOW_AS_IS}
`,
};
}

export const SLASH_COMMANDS: Record<string, string> = slashCommands(PROJECT_TOOL_PREFIX, MANAGED_MARKER);

export const CLAUDE_MD_BLOCK = `${CLAUDE_MD_BEGIN}
## Long-term memory (LTM)

This project keeps a long-term memory for Claude Code in \`.claude/ltm/\`, through the \`ltm\` MCP server.
The most important memories are injected at the start of each session.

- **Recall before you dig.** Before investigating an error, a failing build or an unfamiliar part of the
  code, call \`mcp__ltm__recall\` with a few keywords: an earlier session may have solved it.
- **Store what was hard-won.** After fixing something that took several attempts, finding a non-obvious
  cause, or agreeing on a project convention, call \`mcp__ltm__store_memory\` with a short topic, a
  one-sentence summary and the full explanation, \`keywords\` (other words a later search might use: the
  symptom in a user's words, synonyms, the error's name) and, when it is about specific code, \`anchors\`
  (\`src/file.ts#L10-24\`). Do not store secrets or trivia.
- **Keep memories true.** If a memory turns out to be wrong or outdated, update it with
  \`mcp__ltm__update_memory\` or \`mcp__ltm__forget\` it. A memory marked possibly outdated is about code
  that changed since it was written: check it against the code.
- When detail of a hint or abstract is needed, \`mcp__ltm__get_memory\`; archived memories are found with
  \`mcp__ltm__search_archives\` and brought back with \`mcp__ltm__restore_memory\`.
- The user's commands: /remember, /recall, /forget, /ltm.
${CLAUDE_MD_END}`;
