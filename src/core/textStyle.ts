/**
 * How the engine's answers mark their text up. Claude reads Markdown (the MCP
 * tools' text, which the slash commands show as it is); a person at a terminal
 * reads plain text (the CLI), where `**ID:**` and backticks are noise. The
 * answers (responses.ts) are written once against this interface; memory text
 * itself (a Summary, a Content) is never restyled.
 */
export interface TextStyle {
  /** A name that stands out: a memory's topic, a verdict. */
  strong(text: string): string;
  /** Something to type or copy: an ID, a command. */
  code(text: string): string;
  /** An aside: what happened to a reduced memory. */
  aside(text: string): string;
  /** A title (level 1) or a section's heading (level 2), as lines. */
  heading(text: string, level: 1 | 2): string[];
  /** Labelled values, one a line: `**Label:** value`, or aligned labels in plain text. */
  fields(rows: readonly (readonly [label: string, value: string])[]): string[];
}

export const MARKDOWN: TextStyle = {
  strong: (text) => `**${text}**`,
  code: (text) => `\`${text}\``,
  aside: (text) => `*${text}*`,
  heading: (text, level) => [`${'#'.repeat(level)} ${text}`],
  fields: (rows) => rows.map(([label, value]) => `**${label}:** ${value}`),
};

export const PLAIN: TextStyle = {
  strong: (text) => text,
  code: (text) => text,
  aside: (text) => `(${text})`,
  heading: (text, level) => [text, (level === 1 ? '=' : '-').repeat(Math.min(text.length, 72))],
  fields: (rows) => {
    const width = Math.max(0, ...rows.map(([label]) => label.length)) + 2;
    return rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`);
  },
};
