/**
 * Keeps credentials out of memory files. Memories are committed to git and
 * injected into prompts, so a key pasted into a memory would leak twice.
 * Known credential shapes are replaced by a marker before anything is written.
 *
 * The rules are applied in order. A rule whose pattern has a named group
 * `secret` (or `qsecret`, for a quoted value) replaces only that group and
 * keeps its context (`password=[REDACTED assigned secret]`); the group must end
 * the match (anything after it is a lookahead). Otherwise the whole match is
 * replaced. A marker left by an earlier redaction is never looked into
 * again, so redacting a redacted text changes nothing.
 *
 * Every pattern is written to run in linear time: quantifiers that could meet
 * again are bounded, and identifiers are consumed atomically
 * (`(?=(?<name>…))\k<name>`), so a long hostile input cannot make a rule
 * backtrack without end.
 *
 * The shapes of the provider tokens follow what the providers publish (and
 * what scanners such as gitleaks look for); the regexes are our own.
 */

type Groups = Readonly<Record<string, string | undefined>>;

interface SecretPattern {
  kind: string;
  pattern: RegExp;
  /**
   * Decides on a candidate the pattern alone cannot judge (placeholders,
   * entropy). `text` and `at` (where the secret starts in it) give the context.
   */
  accept?: (secret: string, groups: Groups, text: string, at: number) => boolean;
}

// ---------------------------------------------------------------------------
// Judging a candidate value

/** Shannon entropy of `text` (over UTF-16 units), in bits per character. */
export function shannonEntropy(text: string): number {
  const n = text.length;
  if (n === 0) return 0;
  const ascii = new Uint32Array(128);
  let other: Map<number, number> | undefined;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) ascii[c]! += 1;
    else (other ??= new Map()).set(c, (other.get(c) ?? 0) + 1);
  }
  let bits = 0;
  const add = (count: number): void => {
    if (count === 0) return;
    const p = count / n;
    bits -= p * Math.log2(p);
  };
  ascii.forEach(add);
  other?.forEach(add);
  return bits;
}

const IDENTIFIER_WORD = /[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+/g;
const wordCache = new Map<string, string[]>();

/** Words of an identifier, lower-cased: `MY_SERVICE_TOKEN`, `clientSecret`, `X-Api-Key`, `--db-password`. */
function identifierWords(name: string): string[] {
  let words = wordCache.get(name);
  if (words === undefined) {
    words = (name.match(IDENTIFIER_WORD) ?? []).map((w) => w.toLowerCase());
    if (wordCache.size >= 512) wordCache.clear();
    wordCache.set(name, words);
  }
  return words;
}

/** Words that, as a key, say the value is a password: any value, however short, is a secret. */
const PASSWORD_WORDS = new Set(['password', 'passwd', 'passphrase', 'pwd']);
/** Keys named like these hold a secret whatever it looks like (values of 8+ characters). */
const EXPLICIT_SECRET_SUFFIXES = ['secret', 'secretkey', 'privatekey', 'accesskey', 'apikey', 'accesstoken', 'authtoken', 'refreshtoken'];
/** Keys containing one of these words may hold a secret: a random-looking value is taken as one. */
const GENERIC_KEY_WORDS = new Set([
  'key', 'secret', 'secrets', 'token', 'password', 'passwd', 'passphrase', 'pwd', 'pass',
  'credential', 'credentials', 'cred', 'creds', 'auth', 'oauth',
]);
const GENERIC_KEY_SUFFIXES = ['apikey', 'secretkey', 'privatekey', 'accesskey', 'token', 'secret', 'password', 'passwd', 'credential', 'credentials'];

function isPasswordKey(words: readonly string[]): boolean {
  const last = words.at(-1);
  if (last === undefined) return false;
  if (PASSWORD_WORDS.has(last)) return true;
  if (last === 'pass' && words.length >= 2) return true; // DB_PASS, dbPass; a bare `pass:` is too often something else
  return /(?:password|passwd|passphrase)$/.test(last); // DBPASSWORD, mysqlpassword
}

function isExplicitSecretKey(words: readonly string[]): boolean {
  const joined = words.join('');
  return EXPLICIT_SECRET_SUFFIXES.some((s) => joined.endsWith(s));
}

function isGenericSecretKey(words: readonly string[]): boolean {
  if (words.some((w) => GENERIC_KEY_WORDS.has(w))) return true;
  const joined = words.join('');
  return GENERIC_KEY_SUFFIXES.some((s) => joined.endsWith(s));
}

/**
 * Values that stand for a secret without being one: types, null-ish values,
 * common prose and code words. Compared case-insensitively with the whole value.
 */
const NOT_A_SECRET = new Set([
  // null-ish, booleans, types
  'null', 'nil', 'none', 'undefined', 'true', 'false', 'yes', 'no', 'on', 'off', 'empty', 'blank', 'n/a', 'na', 'tbd', 'todo',
  'string', 'str', '&str', 'text', 'bool', 'boolean', 'int', 'integer', 'number', 'any', 'unknown', 'object', 'bytes', 'char', 'varchar',
  'required', 'optional', 'hidden', 'redacted', 'masked', 'omitted', 'example', 'placeholder', 'dummy', 'sample',
  // prose after "password:"
  'the', 'a', 'an', 'is', 'are', 'was', 'be', 'not', 'never', 'always', 'must', 'should', 'will', 'can', 'may', 'see', 'use', 'set',
  'in', 'on', 'of', 'for', 'from', 'via', 'to', 'as', 'and', 'or', 'same', 'stored', 'kept', 'managed', 'rotated', 'provided', 'given',
  'option', 'flag', 'argument', 'arg', 'parameter', 'param', 'field', 'value', 'input', 'prompt', 'prompted', 'here', 'there',
  'which', 'that', 'this', 'it', 'its', 'only', 'also', 'too', 'instead', 'ask', 'check', 'click', 'enter', 'type', 'change',
  'reset', 'rotate', 'update', 'read', 'get', 'run', 'find', 'look', 'store', 'keep', 'contact', 'request', 'generated', 'unchanged',
  'expected', 'missing', 'invalid', 'incorrect', 'wrong', 'unset', 'void',
  // code after "password:" / "password ="
  'return', 'raise', 'pass', 'continue', 'break', 'yield', 'await', 'async', 'lambda', 'def', 'class', 'if', 'else', 'elif',
  'while', 'with', 'try', 'except', 'finally', 'import', 'print', 'self', 'new', 'const', 'let', 'var', 'function', 'pw',
]);

/** Whole-value placeholders: `${VAR}`, `$VAR`, `{{ var }}`, `<your-password>`, `%VAR%`, `***`, `xxxx`, `!secret`. */
const PLACEHOLDER = new RegExp(
  [
    // ${PASSWORD}, ${{ secrets.X }}, `${cfg.token}` (whole, or cut short at a space or comma);
    // not ${PASSWORD:-default}: the default is a literal, and a secret
    String.raw`^\$\{(?![A-Za-z_]\w*:?[-=+])[^{}]*(?:\}|$)$`,
    String.raw`^\$\{\{`,
    String.raw`^\$[A-Za-z_][A-Za-z0-9_]*$`, // $PASSWORD
    String.raw`^\$\(.*\)$`, // $(pass show db)
    String.raw`^\{\{[\s\S]*\}\}$`,
    String.raw`^\{\{`,
    String.raw`^\{[A-Za-z_][\w.]*\}$`, // {password}
    String.raw`^\{\d*\}$`, // {} {0}
    String.raw`^%[-+ #0]*\d*(?:\.\d+)?[sdrif]$`, // printf: %s
    String.raw`^[:@][A-Za-z_]\w*$`, // SQL parameters: :password, @password
    String.raw`^\$\d+$`, // $1
    String.raw`^<[^<>]*>$`, // <password>
    String.raw`^<%`,
    String.raw`^%[A-Za-z_]\w*%$`, // %PASSWORD%
    String.raw`^%\(\w+\)s$`, // %(password)s
    // ****, xxxx, ..., •••• (the bullet as an escape: one character past Latin-1 in the bundle makes
    // V8 hold the CLI's whole source at two bytes a character; esbuild.mjs checks it)
    String.raw`^[*xX.\u2022#?_-]+$`,
    String.raw`^![A-Za-z_]+$`, // YAML tags: !secret name, !vault |
    String.raw`^[*&][\w-]+$`, // YAML alias or anchor
  ].join('|'),
);

/** A printf conversion: a value holding one is a format string. */
const FORMAT_SPEC = /%(?:\(\w+\))?[-+ #0]*\d*(?:\.\d+)?[sdr](?![A-Za-z0-9])/;

/** Places code reads a secret from: `process.env.X`, `os.environ["X"]`, `config.db.password`. */
const CODE_ROOT = new RegExp(
  String.raw`^(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|System\.getenv|Environment\.GetEnvironmentVariable|Deno\.env|ENV|env|` +
    String.raw`config|settings|cfg|conf|options|opts|args|argv|params|req|request|ctx|context|secrets|credentials|creds|props|vault|keyring)(?:[.[(]|$)`,
);

/**
 * An unquoted value that reads as code rather than as a literal: a call, a
 * member path, a generic type, or a variable named after a secret
 * (`password=password`, `password: dbPassword`).
 */
function looksLikeCode(value: string): boolean {
  if (CODE_ROOT.test(value)) return true;
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(/.test(value)) return true; // getPassword(), hash(pw), z.string().min(8)
  // user.password, this.secret (without digits: P4ss.word is a password)
  if (/^[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][A-Za-z_$]*)+$/.test(value)) return true;
  // Option<String>, Optional[str], vars["X"] (the closing bracket is cut off)
  if (/^[A-Za-z_][\w:.]*[<[]/.test(value)) return true;
  // a snake_case variable: password=getpass_unicode (in a .env file, DB_PASSWORD=my_pass is a literal: see isLiteral)
  if (/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(value)) return true;
  return namesASecret(value);
}

/** `password`, `DB_PASSWORD`, `newPass`, `your-api-key`: an identifier without digits naming a secret. */
function namesASecret(value: string): boolean {
  if (!/^[A-Za-z_$][A-Za-z_$-]*$/.test(value)) return false;
  return identifierWords(value).some((w) => GENERIC_KEY_WORDS.has(w));
}

/**
 * In a URL or on a command line every value is a literal: only a template
 * placeholder, or a word standing for the password (`user:password@host`), is
 * not a secret.
 */
function isTemplate(value: string): boolean {
  const v = value.trim();
  return v === '' || PLACEHOLDER.test(v) || namesASecret(v);
}

/**
 * A value that is not a secret: empty, a URL, a placeholder, a common word; or,
 * unless it is a `literal` (quoted, or in `KEY=value` environment style), code.
 */
function isPlaceholder(value: string, literal: boolean): boolean {
  const v = value.trim();
  if (v === '') return true;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v)) return true; // a URL: its password, if any, is the URL rule's business
  if (NOT_A_SECRET.has(v.toLowerCase())) return true;
  if (PLACEHOLDER.test(v)) return true;
  if (v.length < 4 && !/[\p{L}\p{N}]/u.test(v)) return true; // `"Enter password:")`: the quote closes a string, `)` is code
  if (FORMAT_SPEC.test(v)) return true; // "%s:%s" is filled in later
  return !literal && looksLikeCode(v);
}

/** Quoted, or `DB_PASSWORD=secret` as in a .env file or `docker run -e`: the value is text, not code. */
function isLiteral(groups: Groups): boolean {
  return groups.q !== undefined || (groups.assign === '=' && /^[A-Z][A-Z0-9_]*$/.test(groups.name ?? ''));
}

/** A word (`user`, `Session`, `HTTP`, `oauth2`), a number, or separators. */
const WORD_TOKEN = /([A-Z]?[a-z]+|[A-Z]+(?![a-z]))\d*|\d+|[_.\-/+~=:@]+/y;

/** `user_42_profile`, `staging-eu-west-1`, `SessionManagerFactory`, `google-oauth2`: words, not randomness. */
function looksLikeWords(value: string): boolean {
  // Words seldom have a letter right after a digit (k8s, 2nd); generated tokens often do (8f3k2Lm, 550e8400).
  if ((value.match(/\d[A-Za-z]/g)?.length ?? 0) >= 2) return false;
  let letters = 0;
  let words = 0;
  let separated = false;
  WORD_TOKEN.lastIndex = 0;
  while (WORD_TOKEN.lastIndex < value.length) {
    const m = WORD_TOKEN.exec(value);
    if (m === null) return false; // a character that is no part of a word
    if (m[1] !== undefined) {
      letters += m[1].length;
      words += 1;
    } else if (!/^\d/.test(m[0])) {
      separated = true;
    }
  }
  // rc2_key_st is words; AbCdEfGhIj, all case flips and no separator, is not
  return words > 0 && letters / words >= (separated ? 2 : 3);
}

function looksLikePath(value: string): boolean {
  if (/^(?:\/|\.{1,2}\/|~\/)/.test(value)) return true;
  return /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(value) && /[/.]/.test(value.slice(0, -1)) && /^[\w./-]+$/.test(value);
}

/** A token that looks generated: long enough, varied enough, and not words, a path or a number. */
function looksRandom(value: string): boolean {
  return (
    value.length >= 10 &&
    /[A-Za-z]/.test(value) &&
    !FORMAT_SPEC.test(value) && // a format string: '%s/PKG-INFO'
    !looksLikeWords(value) &&
    !looksLikePath(value) &&
    shannonEntropy(value) >= 3
  );
}

// ---------------------------------------------------------------------------
// Patterns

/** The start of a key: not inside an identifier. An opening quote just before it is captured as `open`. */
const KEY_START = String.raw`(?<=(?<open>["'\x60])|^|[^"'\x60\w.$@-])`;
/** An identifier used as a key, consumed atomically: `password`, `"client_secret"`, `--db-password`, `X-Api-Key`. */
const KEY_NAME = String.raw`(?=(?<name>-{0,2}[A-Za-z_$@][\w.$@-]{0,80}))\k<name>`;
const KEY = KEY_START + KEY_NAME;
/** The key ends like a password or an explicitly secret name (checked word by word in acceptAssigned). */
const ASSIGNED_KEY_END = 
  String.raw`(?<=pass|passwd|password|passphrase|pwd|secret|(?:secret|private|access|api)[_.-]?key|(?:access|auth|refresh)[_.-]?token)`;
/** The key contains a word that may name a secret (checked word by word in acceptGeneric). */
const GENERIC_KEY_HAS = String.raw`(?=[\w.$@-]{0,80}?(?:key|secret|token|pass|pwd|cred|auth))`;
/** What may close a key before the operator: a quote, Markdown bold. */
const KEY_CLOSE = String.raw`(?:(?<kq>["'\x60])|\*{1,2})?`;
/** An assignment operator (not a comparison, a scope or a URL). */
const ASSIGN = String.raw`(?<assign>[ \t]{0,8}(?<op>:=|=>|=(?![=~>])|:(?![:=]|\/\/))\*{0,2}[ \t]{0,8})`;
/**
 * A quoted value (any characters up to the closing quote on the line), or an
 * unquoted one: a whole `${…}`, or characters up to a space, quote, comma or
 * semicolon, not starting like a structure (`{`, `[`, `(`, `<`, `|`, `>`) and
 * not ending in a closing bracket, full stop or colon (`password=None):`).
 */
const QUOTED_VALUE = String.raw`(?<![\w$])(?:[bBrRuUfF]{1,2}(?=["']))?(?<q>["'\x60])(?<qsecret>(?:(?!\k<q>)[^\r\n]){1,500})(?=\k<q>|[\r\n]|$)`;
const UNQUOTED_VALUE = String.raw`(?![bBrRuUfF]{1,2}["'])(?<secret>\$\{[^\s"'\x60,;{}]{1,200}\}|(?![{[(<|>])[^\s"'\x60,;]{0,299}[^\s"'\x60,;)\]}.:>])`;
const ANY_VALUE = `(?:${QUOTED_VALUE}|${UNQUOTED_VALUE})`;
/** A token: base64, hex or URL-safe characters, quoted or not (no `$`, brackets or spaces: that is code or prose). */
const TOKEN_VALUE = String.raw`(?:(?<q>["'\x60])(?<qsecret>[\w.~+/=:@%!#*-]{10,1000})(?=\k<q>)|(?<secret>[A-Za-z0-9_.~+/-]{10,1000}={0,3}))`;

/**
 * Lines of key material after a BEGIN line: base64 lines and `Proc-Type: …`
 * headers, after line breaks (real or, inside JSON, escaped); blank lines after
 * the last of them are left alone.
 */
const LINE_BREAK = String.raw`[ \t]*(?:\r?\n|\\r\\n|\\n)`;
const KEY_HEADER = String.raw`[ \t]*[A-Za-z][A-Za-z-]{0,30}:[ \t][^\r\n\\]{0,200}`;
const BASE64_LINE = String.raw`[A-Za-z0-9+/=]{1,10000}(?=[ \t]*(?:\r?\n|\\[rn]|$|"))`;
const KEY_MATERIAL = `(?:(?:${LINE_BREAK})*(?:${KEY_HEADER}|${BASE64_LINE}))*`;

const UUID = String.raw`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`;

function re(source: string, flags = 'g'): RegExp {
  return new RegExp(source, flags);
}

/**
 * `'password:', password` is a string literal ending after the colon, then code:
 * the quote after the operator closes the key's own quote.
 */
function closesKeyQuote(groups: Groups): boolean {
  return groups.open !== undefined && groups.kq === undefined && groups.q === groups.open;
}

function acceptAssigned(secret: string, groups: Groups): boolean {
  const words = identifierWords(groups.name ?? '');
  if (groups.q === undefined && groups.op === '=>') return false; // an arrow function's parameter, not an assignment
  if (closesKeyQuote(groups)) return false;
  if (isPlaceholder(secret, isLiteral(groups))) return false;
  if (isPasswordKey(words)) {
    // PWD=/home/me is the working directory, not a password
    if (words.length === 1 && words[0] === 'pwd' && /^[/~.]/.test(secret)) return false;
    return true;
  }
  return isExplicitSecretKey(words) && secret.length >= 8;
}

/** `--password x` as `password=x`; `--token x` as a generic key: only a random-looking value. */
function acceptFlag(secret: string, groups: Groups): boolean {
  if (acceptAssigned(secret, groups)) return true;
  return isGenericSecretKey(identifierWords(groups.name ?? '')) && !isPlaceholder(secret, isLiteral(groups)) && looksRandom(secret);
}

function acceptGeneric(secret: string, groups: Groups): boolean {
  if ((groups.q === undefined && groups.op === '=>') || closesKeyQuote(groups)) return false;
  return looksRandom(secret) && isGenericSecretKey(identifierWords(groups.name ?? '')) && !isPlaceholder(secret, isLiteral(groups));
}

/** Up to `max` characters of the line before `at`. */
function lineBefore(text: string, at: number, max: number): string {
  const from = Math.max(0, at - max);
  const chunk = text.slice(from, at);
  return chunk.slice(Math.max(chunk.lastIndexOf('\n'), chunk.lastIndexOf('\r')) + 1);
}

const AUTH_SCHEMES = /^(?:bearer|basic|token|bot|digest|negotiate|ntlm|oauth|apikey|api-key|ssws|jwt)$/i;

const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    kind: 'private key',
    // BEGIN … END; or, cut off before its END line, BEGIN and the key-material lines after it
    pattern: re(
      String.raw`-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----` +
        String.raw`(?:(?:(?!-----(?:BEGIN|END) )[\s\S]){0,20000}-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|${KEY_MATERIAL})`,
    ),
    // the BEGIN line alone, quoted in code, is not a key
    accept: (secret) => /[A-Za-z0-9+/]{16}/.test(secret.slice(secret.indexOf('KEY') + 3)),
  },

  // Secrets that are URLs
  { kind: 'Slack webhook URL', pattern: re(String.raw`(?:\bhttps?:\/\/)?\bhooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/+-]{8,}`) },
  {
    kind: 'Discord webhook URL',
    pattern: re(
      String.raw`(?:\bhttps?:\/\/)?\b(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api\/(?:v\d{1,2}\/)?webhooks\/\d{5,30}\/[A-Za-z0-9_-]{20,}`,
    ),
  },

  // Provider tokens, recognised by their shape
  { kind: 'Anthropic API key', pattern: re(String.raw`\bsk-ant-[A-Za-z0-9_-]{20,}`) },
  { kind: 'OpenAI API key', pattern: re(String.raw`\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}`) },
  { kind: 'GitHub token', pattern: re(String.raw`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})`) },
  { kind: 'GitLab token', pattern: re(String.raw`\bgl(?:pat|dt|rt|ptt|soat|cbt|ft)-[A-Za-z0-9_-]{20,}`) },
  { kind: 'AWS access key', pattern: re(String.raw`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`) },
  { kind: 'Google API key', pattern: re(String.raw`\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])`) },
  { kind: 'Google OAuth client secret', pattern: re(String.raw`\bGOCSPX-[A-Za-z0-9_-]{20,}`) },
  { kind: 'Google OAuth token', pattern: re(String.raw`\bya29\.[A-Za-z0-9_-]{20,}`) },
  { kind: 'Slack token', pattern: re(String.raw`\b(?:xox[abposre]-|xoxe\.xox[bp]-|xapp-)[A-Za-z0-9-]{10,}`) },
  { kind: 'Stripe key', pattern: re(String.raw`\b(?:[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{20,})`) },
  { kind: 'npm token', pattern: re(String.raw`\bnpm_[A-Za-z0-9]{36}\b`) },
  { kind: 'PyPI token', pattern: re(String.raw`\bpypi-AgE[A-Za-z0-9_-]{50,}`) },
  { kind: 'Hugging Face token', pattern: re(String.raw`\bhf_[A-Za-z0-9]{30,}\b`) },
  { kind: 'Databricks token', pattern: re(String.raw`\bdapi[0-9a-f]{32}(?:-\d{1,2})?\b`) },
  { kind: 'DigitalOcean token', pattern: re(String.raw`\bdo[opr]_v1_[0-9a-f]{64}\b`) },
  { kind: 'Shopify token', pattern: re(String.raw`\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}\b`) },
  { kind: 'SendGrid API key', pattern: re(String.raw`\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}(?![A-Za-z0-9_-])`) },
  { kind: 'Twilio API key', pattern: re(String.raw`\bSK[0-9a-fA-F]{32}\b`) },
  { kind: 'Mailgun API key', pattern: re(String.raw`\bkey-[0-9a-f]{32}\b`) },
  { kind: 'Heroku API key', pattern: re(String.raw`\bHRKU-[A-Za-z0-9_-]{20,}`) },
  // A Heroku API key is a bare UUID: only taken as one with "heroku" shortly before it on the line.
  {
    kind: 'Heroku API key',
    pattern: re(String.raw`heroku[^\r\n]{0,60}?(?<![0-9a-fA-F-])(?<secret>${UUID})(?![0-9a-fA-F-])`, 'gi'),
  },
  { kind: 'Telegram bot token', pattern: re(String.raw`(?<=^|[^\w:]|bot)\d{8,10}:[A-Za-z0-9_-]{35}(?![\w-])`) },
  {
    kind: 'Discord bot token',
    pattern: re(String.raw`(?<![\w.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![\w-])`),
  },
  { kind: 'Atlassian API token', pattern: re(String.raw`\bATATT3[A-Za-z0-9_=-]{20,}`) },
  { kind: 'HashiCorp Vault token', pattern: re(String.raw`\bhv[sb]\.[A-Za-z0-9_-]{24,}`) },
  { kind: 'Postman API key', pattern: re(String.raw`\bPMAK-[0-9a-fA-F]{24}-[0-9a-fA-F]{34}\b`) },
  { kind: 'New Relic key', pattern: re(String.raw`\bNR(?:AK|II|JS)-[A-Za-z0-9]{20,}\b`) },
  { kind: 'Grafana token', pattern: re(String.raw`\b(?:glsa_[A-Za-z0-9]{32}_[0-9a-fA-F]{8}\b|glc_[A-Za-z0-9+/]{32,}={0,2})`) },
  { kind: 'Sentry token', pattern: re(String.raw`\bsntry[su]_[A-Za-z0-9+/=_-]{30,}`) },
  { kind: 'Linear API key', pattern: re(String.raw`\blin_api_[A-Za-z0-9]{40}\b`) },
  { kind: 'JSON web token', pattern: re(String.raw`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`) },

  // Secrets recognised by the key they are given to
  {
    kind: 'AWS secret key',
    pattern: re(
      String.raw`(?<![A-Za-z0-9])(?:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)` +
        String.raw`${KEY_CLOSE}[ \t]{0,8}[:=][ \t]{0,8}["'\x60]?(?<secret>[A-Za-z0-9/+=]{30,})`,
      'gi',
    ),
  },
  {
    kind: 'Azure connection-string key',
    pattern: re(String.raw`(?<![A-Za-z0-9])(?:Account|SharedAccess)Key[ \t]*=[ \t]*(?<secret>[A-Za-z0-9+/]{20,}={0,2})`, 'gi'),
  },
  { kind: 'Azure SAS signature', pattern: re(String.raw`[?&]sig=(?<secret>[A-Za-z0-9%+/]{30,}={0,2})`) },
  {
    kind: 'password in a URL',
    // scheme://user:password@host, and redis://:password@host
    pattern: re(String.raw`(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/[^\s:/@]{0,200}:(?<secret>[^\s@/]{1,200})(?=@)`),
    accept: (secret) => !isTemplate(secret),
  },
  {
    kind: 'password in a URL',
    // ?user=me&password=… : in a query string the value ends at the next &
    pattern: re(String.raw`[?&][\w.-]{0,40}(?:password|passwd|pwd)=(?<secret>[^&\s#"'\x60<>]{1,300})`, 'gi'),
    accept: (secret) => !isTemplate(secret),
  },
  {
    kind: 'authorization header',
    pattern: re(
      String.raw`(?<![\w-])(?:Proxy-)?Authorization${KEY_CLOSE}[ \t]{0,8}[:=][ \t]{0,8}(?<q>["'\x60]?)` +
        String.raw`(?:(?<scheme>Bearer|Basic|Token|Bot|Negotiate|NTLM|OAuth|ApiKey|Api-Key|SSWS|JWT)[ \t]+)?(?<secret>[^\s"'\x60,;]{1,2000})`,
      'gi',
    ),
    accept: (secret, groups) =>
      secret.length >= 8 && !AUTH_SCHEMES.test(secret) && !isPlaceholder(secret, groups.q !== '' || groups.scheme !== undefined),
  },
  {
    kind: 'bearer token',
    pattern: re(String.raw`(?<![\w-])[Bb]earer[ \t]+(?<secret>[A-Za-z0-9._~+/-]{20,2000}=*)`),
    accept: (secret) => looksRandom(secret),
  },
  {
    kind: 'password on a command line',
    // curl -u user:password, curl --user user:password
    pattern: re(String.raw`(?<=[ \t])(?:-u|--user)[ \t]*["']?[^\s:"']{1,100}:(?<secret>[^\s"']{1,200})`),
    accept: (secret, _groups, text, at) => !isTemplate(secret) && /\bcurl\b/.test(lineBefore(text, at, 300)),
  },
  {
    kind: 'password on a command line',
    // sshpass -p password, redis-cli -a password, mysql -ppassword (with a space, mysql's -p prompts)
    pattern: re(String.raw`(?<=[ \t])-(?<flag>[pa])(?<gap>[ \t]*)["']?(?<secret>[^\s"'|&;<>]{1,200})`),
    accept: (secret, groups, text, at) => {
      if (isTemplate(secret)) return false;
      const line = lineBefore(text, at, 300);
      if (groups.flag === 'a') return /\bredis-cli\b/.test(line);
      return /\bsshpass\b/.test(line) || (groups.gap === '' && /\bmysql(?:dump|admin)?\b/.test(line));
    },
  },
  {
    kind: 'assigned secret',
    // password=…, "client_secret": "…", DB_PASS: …, --password=…, api_key = "…"
    pattern: re(`${KEY}${ASSIGNED_KEY_END}${KEY_CLOSE}${ASSIGN}${ANY_VALUE}`, 'gi'),
    accept: acceptAssigned,
  },
  {
    kind: 'assigned secret',
    // --password hunter2, --api-key "…"
    pattern: re(
      String.raw`(?<![\w-])--(?<name>[A-Za-z][\w-]{0,40}(?<=pass|passwd|password|passphrase|secret|key|token))[ \t]+(?!-)` +
        String.raw`(?:(?<q>["'])(?<qsecret>(?:(?!\k<q>)[^\r\n]){1,500})(?=\k<q>)|(?<secret>[^\s"'\x60,;|&<>()]{1,300}))`,
      'gi',
    ),
    accept: acceptFlag,
  },
  {
    kind: 'assigned secret',
    // <password>…</password>, as in Maven's settings.xml
    pattern: re(String.raw`<(?<name>[\w.-]{0,40}(?:password|passwd|passphrase|pwd|secret|key|token))>(?<secret>[^<\r\n]{1,300})(?=<\/\k<name>>)`, 'gi'),
    accept: (secret, groups) => acceptFlag(secret, { ...groups, q: '' }),
  },
  {
    kind: 'assigned secret',
    // ~/.netrc: machine host login me password secret
    pattern: re(String.raw`\bmachine\s+\S{1,200}\s+login\s+\S{1,200}\s+password[ \t]+(?<secret>\S{1,300})`),
  },
  {
    kind: 'generic secret',
    // MY_SERVICE_TOKEN=8f3k…, "serviceKey": "…": a random-looking token given to a key-like name
    pattern: re(`${KEY_START}${GENERIC_KEY_HAS}${KEY_NAME}${KEY_CLOSE}${ASSIGN}${TOKEN_VALUE}`, 'gi'),
    accept: acceptGeneric,
  },
];

// ---------------------------------------------------------------------------
// Redacting

export interface Redaction {
  kind: string;
  count: number;
}

export interface RedactionResult {
  text: string;
  redactions: Redaction[];
}

/** The kinds of secret redactSecrets can report, in the order it looks for them. */
export const SECRET_KINDS: readonly string[] = [...new Set(SECRET_PATTERNS.map((p) => p.kind))];

function marker(kind: string): string {
  return `[REDACTED ${kind}]`;
}

/**
 * Markers this module writes, in any letter case (tags are lower-cased after
 * redaction). Anything else in brackets is ordinary text, searched like any other.
 */
const MARKER = new RegExp(String.raw`\[REDACTED (?:${SECRET_KINDS.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})\]`, 'gi');

/** Where the markers are in `text`, as [start, end) pairs in order. */
function markerSpans(text: string): Array<[number, number]> {
  if (!/\[redacted /i.test(text)) return [];
  return [...text.matchAll(MARKER)].map((m): [number, number] => [m.index, m.index + m[0].length]);
}

/**
 * Applies one rule to the text between markers: a marker is never looked into,
 * and no match runs across one. The whole text is searched in one go (fast when
 * there are many markers); a match that runs into a marker is searched again
 * within its own stretch of text, as if the marker were the end of the text.
 */
function applyRule(text: string, rule: SecretPattern, markers: ReadonlyArray<[number, number]>, counts: Map<string, number>): string {
  const re = rule.pattern;
  const local = new RegExp(re.source, re.flags);
  const parts: string[] = [];
  let last = 0;
  let k = 0; // the first marker that ends after the current match starts
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    let match: RegExpExecArray = m;
    let base = 0;
    while (k < markers.length && markers[k]![1] <= m.index) k++;
    const hit = markers[k];
    if (hit !== undefined && hit[0] < m.index + Math.max(m[0].length, 1)) {
      if (m.index >= hit[0]) {
        re.lastIndex = hit[1]; // it starts inside a marker
        continue;
      }
      // It runs into a marker: search the stretch before the marker on its own.
      base = k > 0 ? markers[k - 1]![1] : 0;
      local.lastIndex = m.index - base;
      const inStretch = local.exec(text.slice(base, hit[0]));
      if (inStretch === null) {
        re.lastIndex = hit[1];
        continue;
      }
      match = inStretch;
    }
    const groups: Groups = match.groups ?? {};
    // The secret group, when there is one, always ends the match (what follows it is a lookahead).
    const secret = groups.secret ?? groups.qsecret ?? match[0];
    const end = base + match.index + match[0].length;
    const start = end - secret.length;
    if (secret.length === 0 || (rule.accept !== undefined && !rule.accept(secret, groups, text, start))) {
      // Not a secret here; a match may still start further on, inside this one.
      re.lastIndex = base + match.index + 1;
      continue;
    }
    parts.push(text.slice(last, start), marker(rule.kind));
    last = end;
    counts.set(rule.kind, (counts.get(rule.kind) ?? 0) + 1);
    re.lastIndex = Math.max(end, base + match.index + match[0].length);
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(last));
  return parts.join('');
}

export function redactSecrets(text: string): RedactionResult {
  const counts = new Map<string, number>();
  let result = text;
  let markers = markerSpans(result);
  for (const rule of SECRET_PATTERNS) {
    const next = applyRule(result, rule, markers, counts);
    if (next !== result) markers = markerSpans(next);
    result = next;
  }
  return { text: result, redactions: [...counts].map(([kind, count]) => ({ kind, count })) };
}

export function describeRedactions(redactions: readonly Redaction[]): string {
  return redactions.map((r) => (r.count === 1 ? r.kind : `${r.count}× ${r.kind}`)).join(', ');
}
