/**
 * A fast reader for the frontmatter LTM itself writes, and nothing else.
 *
 * Reading a store without its caches (a fresh clone, a copied project) parses
 * every memory file's frontmatter; through `yaml`'s document model that is
 * about 50 µs a file, most of the cold start at 10,000 memories. Yet the
 * files LTM writes use a small, fixed subset of YAML: one `key: value` per
 * line, strings double-quoted on one line with JSON's escapes, plain decimal
 * numbers, block lists, and lists of flat maps (anchors, phase history).
 *
 * This reads exactly that subset and gives up (null) on anything else: a
 * comment, a plain or single-quoted string, a blank line, an escape JSON does
 * not know, a key it does not expect, a duplicate key. Then `yaml` reads the
 * file as before, so a hand-edited file means what YAML says it means. Where
 * it answers, it answers what `yaml` would: test/unit/canonicalFrontmatter.test.ts
 * holds the two side by side on generated files.
 */
import { FRONTMATTER_KEYS } from './model';

/** The top-level keys read here; any other key sends the file to `yaml`. */
const KNOWN_KEYS = new Set<string>([...FRONTMATTER_KEYS, 'keywords', 'anchors', 'status', 'phase_history']);
/** The only top-level keys whose value may be a number. */
const NUMBER_KEYS = new Set(['phase', 'difficulty', 'created_session']);
/** A key inside a list item's map (anchors, phase history): never `__proto__`. */
const ITEM_KEY = /^[a-z][a-z_]*$/;
/** Decimal numbers as YAML's core schema and JavaScript read them alike. */
const NUMBER = /^(?:0|[1-9][0-9]{0,14})(?:\.[0-9]+)?(?:e[-+]?[0-9]{1,3})?$/;
/**
 * A tag written plain (the reference implementation writes `- conventions`):
 * only characters that cannot start or end anything in YAML. The parser
 * takes a tag's source text whatever YAML types it as (see parseFrontmatter).
 */
const PLAIN_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.\/+-]*(?::[A-Za-z0-9_.\/+-]+)*$/;

/** A one-line double-quoted string, as JSON reads it; undefined when it is anything else. */
function quoted(text: string): string | undefined {
  if (text.charCodeAt(0) !== 0x22 || text.charCodeAt(text.length - 1) !== 0x22) return undefined;
  // JSON refuses raw control characters (a tab, a carriage return) where YAML may take them: `yaml` decides those.
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A scalar after `key: `: a quoted string, or a decimal number where `numbers` allows. */
function scalar(text: string, numbers: boolean): string | number | undefined {
  if (numbers && NUMBER.test(text)) return Number(text);
  return quoted(text);
}

/** `key: rest` with a simple key; null when the line is not that. */
function keyValue(line: string, at: number): { key: string; rest: string } | null {
  const colon = line.indexOf(':', at);
  if (colon <= at) return null;
  const key = line.slice(at, colon);
  if (!ITEM_KEY.test(key)) return null;
  const rest = line.slice(colon + 1);
  if (rest !== '' && rest.charCodeAt(0) !== 0x20) return null;
  // Spaces only: String.prototype.trim() would also drop characters YAML keeps (U+00A0, U+2028).
  return { key, rest: rest.replace(/^ +| +$/g, '') };
}

/**
 * The fields of a frontmatter block LTM wrote, as `yaml` reads them (text
 * fields as their text); null when the block is not in the subset read here.
 */
export function readCanonicalFrontmatter(frontmatter: string): Record<string, unknown> | null {
  const lines = frontmatter.split('\n');
  // The block ends with its last line's newline.
  // An empty block is no mapping at all in YAML.
  if (lines.pop() !== '' || lines.length === 0) return null;
  const fields: Record<string, unknown> = {};
  let i = 0;
  while (i < lines.length) {
    const entry = keyValue(lines[i]!, 0);
    if (!entry || !KNOWN_KEYS.has(entry.key) || Object.hasOwn(fields, entry.key)) return null;
    i++;
    if (entry.rest === '[]') {
      fields[entry.key] = [];
    } else if (entry.rest !== '') {
      const value = scalar(entry.rest, NUMBER_KEYS.has(entry.key));
      if (value === undefined) return null;
      fields[entry.key] = value;
    } else {
      const items: unknown[] = [];
      while (i < lines.length && lines[i]!.startsWith('  - ')) {
        const item = listItem(lines, i, entry.key === 'tags');
        if (!item) return null;
        items.push(item.value);
        i = item.next;
      }
      // `key:` with no items is null in YAML: rare enough to leave to `yaml`.
      if (items.length === 0) return null;
      fields[entry.key] = items;
    }
  }
  return fields;
}

/** The list item starting at line `at`: a scalar, or a flat map whose keys continue on lines indented by four. */
function listItem(lines: readonly string[], at: number, plainAllowed: boolean): { value: unknown; next: number } | null {
  const first = lines[at]!.slice(4);
  const head = first.charCodeAt(0) === 0x22 ? null : keyValue(first, 0);
  if (!head) {
    const value = plainAllowed && PLAIN_TAG.test(first) ? first : quoted(first);
    return value === undefined ? null : { value, next: at + 1 };
  }
  const map: Record<string, unknown> = {};
  let entry: { key: string; rest: string } | null = head;
  let next = at + 1;
  for (;;) {
    if (Object.hasOwn(map, entry.key)) return null;
    const value = scalar(entry.rest, true);
    if (value === undefined) return null;
    map[entry.key] = value;
    const line = lines[next];
    if (line === undefined || !line.startsWith('    ') || line.charCodeAt(4) === 0x20) break;
    entry = keyValue(line, 4);
    if (!entry) return null;
    next++;
  }
  return { value: map, next };
}
