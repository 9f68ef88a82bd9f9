/**
 * Edits of JSON files that belong to the person (.claude/settings.local.json,
 * .mcp.json): only what LTM adds or removes changes, and a file is written
 * atomically and only when its content changed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { applyEdits, modify, parse as parseJsonc, printParseErrorCode, type FormattingOptions, type JSONPath, type ParseError } from 'jsonc-parser';
import { invalidInput } from '../core/errors';
import { readTextIfExists, writeFileAtomic } from '../core/files';

/** What setup did to one file; `note` says why, when it is worth saying. */
export type Change = { file: string; action: 'created' | 'updated' | 'removed' | 'unchanged'; note?: string };

export type Json = Record<string, unknown>;

/**
 * A JSON file edited in place with jsonc-parser: only the parts LTM adds or
 * removes change; indentation, key order, line endings and the final newline
 * of everything else stay as the person wrote them.
 */
export class JsonFileEdit {
  private constructor(
    readonly file: string,
    readonly original: string | null,
    private text: string,
  ) {}

  static read(file: string): JsonFileEdit {
    const original = readTextIfExists(file);
    const edit = new JsonFileEdit(file, original, original ?? '{}\n');
    edit.value(); // validates before anything changes
    return edit;
  }

  value(): Json {
    const errors: ParseError[] = [];
    // Strict JSON: Claude Code itself reads these files with a JSON parser.
    const value: unknown = parseJsonc(this.text, errors, { allowTrailingComma: false, disallowComments: true });
    if (errors.length > 0) {
      const e = errors[0]!;
      throw invalidInput(`cannot read ${this.file}: ${printParseErrorCode(e.error)} at offset ${e.offset}; fix it by hand, nothing was changed`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw invalidInput(`cannot read ${this.file}: it is not a JSON object; nothing was changed`);
    }
    return value as Json;
  }

  set(path: JSONPath, value: unknown): void {
    this.text = applyEdits(this.text, modify(this.text, path, value, { formattingOptions: formattingOf(this.text) }));
  }

  /** The text to write, or null when nothing is left (an empty object) and the file should go. */
  result(): string | null {
    return Object.keys(this.value()).length === 0 && (this.original === null || Object.keys(parseJsonc(this.original) ?? {}).length > 0)
      ? null
      : this.text;
  }

  /** Keeps the original bytes when the edits changed nothing that a JSON reader sees. */
  resultKeepingEquivalent(): string | null {
    if (this.original !== null && isDeepStrictEqual(parseJsonc(this.original), this.value())) return this.original;
    return this.result();
  }
}

/** The indentation and line ending a file already uses, for what LTM inserts. */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
  return {
    insertSpaces: !indent.startsWith('\t'),
    tabSize: indent.startsWith('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/** Writes `text` unless the file already holds it; `null` removes the file. Reports what happened. */
export function writeIfChanged(file: string, text: string | null, changes: Change[]): void {
  const before = readTextIfExists(file);
  if (text === null) {
    if (before !== null) {
      fs.rmSync(file);
      changes.push({ file, action: 'removed' });
    }
    return;
  }
  if (before === text) {
    changes.push({ file, action: 'unchanged' });
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, text);
  changes.push({ file, action: before === null ? 'created' : 'updated' });
}

