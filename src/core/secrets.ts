/**
 * Keeps credentials out of memory files. Memories are committed to git and
 * injected into prompts, so a key pasted into a memory would leak twice.
 * Known credential shapes are replaced by a marker before anything is written.
 */

interface SecretPattern {
  kind: string;
  pattern: RegExp;
}

const SECRET_PATTERNS: readonly SecretPattern[] = [
  { kind: 'private key', pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g },
  { kind: 'Anthropic API key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: 'OpenAI API key', pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}/g },
  { kind: 'GitHub token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})/g },
  { kind: 'GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: 'AWS access key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  {
    kind: 'AWS secret key',
    pattern: /(?<=\baws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{30,}/gi,
  },
  { kind: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'Slack token', pattern: /\bxox[abpors]-[A-Za-z0-9-]{10,}/g },
  { kind: 'Stripe key', pattern: /\b[rs]k_live_[A-Za-z0-9]{20,}/g },
  { kind: 'npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: 'JSON web token', pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g },
  {
    kind: 'password in a URL',
    pattern: /(?<=[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]{3,}(?=@)/gi,
  },
  {
    kind: 'assigned secret',
    // password=..., api_key: "...", SECRET_TOKEN=... (the value only; short values are not secrets)
    pattern:
      /(?<=\b[A-Za-z0-9_]*(?:password|passwd|secret|secret[_-]?key|private[_-]?key|access[_-]?key|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)["']?\s*[:=]\s*["']?)[^\s"'`,;]{8,}/gi,
  },
];

export interface Redaction {
  kind: string;
  count: number;
}

export interface RedactionResult {
  text: string;
  redactions: Redaction[];
}

export function redactSecrets(text: string): RedactionResult {
  const counts = new Map<string, number>();
  let result = text;
  for (const { kind, pattern } of SECRET_PATTERNS) {
    result = result.replace(pattern, (match) => {
      // A marker left by an earlier redaction is not a secret.
      if (match.startsWith('[REDACTED')) return match;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      return `[REDACTED ${kind}]`;
    });
  }
  return { text: result, redactions: [...counts].map(([kind, count]) => ({ kind, count })) };
}

export function describeRedactions(redactions: readonly Redaction[]): string {
  return redactions.map((r) => (r.count === 1 ? r.kind : `${r.count}× ${r.kind}`)).join(', ');
}
