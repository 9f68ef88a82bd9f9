/**
 * stats.json and its journal (stats.log, statsJournal.ts) as this process
 * last read or wrote them, and the only code that writes them: every
 * memory's usage entry, with the journal's lines applied on top.
 *
 * refresh() compares both files' signatures with the last ones seen: lines
 * appended to the journal since are read alone (a busy server's refresh
 * stays O(1) in the journal's length), anything else reads both files again.
 * A write records the signature of what it wrote, so this process never
 * re-reads its own writes. StatsWriter (statsWriter.ts) decides what to
 * write and when; this is how.
 */
import * as fs from 'node:fs';
import { replaceWithTemp, replaceWithTempAsync, sameSignature, statSignature, writeFileAtomic, writeTempFileFrom, writeTempFileFromAsync, type FileSignature, type PieceWriter } from './files';
import type { MemoryStats } from './model';
import { applyJournal, journalAppliesTo, journalHeader, readJournalLines } from './statsJournal';
import { ensureGitignore, readStats, readStoreFile, type JsonFileStatus, type StorePaths } from './storeFiles';

/** stats.log as read: its signature, the bytes of complete lines read (the next read starts there), how many lines they hold, and whether it applies to stats.json as read. */
interface JournalAsRead {
  signature: FileSignature | null;
  consumed: number;
  lines: number;
  applies: boolean;
}

const NO_JOURNAL: JournalAsRead = { signature: null, consumed: 0, lines: 0, applies: false };

export class StatsFile {
  /** stats.json's entries with the journal applied. */
  stats = new Map<string, MemoryStats>();
  status: JsonFileStatus = { kind: 'missing' };
  /** stats.json's signature as read or written here; null: absent. */
  signature: FileSignature | null = null;
  /** A journal naming another stats.json than the one read is ignored (statsJournal.ts). */
  private journal: JournalAsRead = NO_JOURNAL;
  /**
   * While this process writes stats.json without blocking (under the lock):
   * until the rename is done and its signature recorded, the memory copy is
   * newer than the disk, and refresh() must not read the file.
   */
  private writeInFlight = false;

  /** @param onRead called whenever either file is read again (it changed on disk) */
  constructor(
    private readonly paths: StorePaths,
    private readonly onRead: () => void = () => undefined,
  ) {}

  /** Reads what changed on disk since it was read or written here. */
  refresh(): void {
    const inFlight = this.writeInFlight;
    const statsSig = inFlight ? this.signature : statSignature(this.paths.stats);
    const journalSig = inFlight ? this.journal.signature : statSignature(this.paths.statsJournal);
    const statsChanged = !sameSignature(statsSig, this.signature) || (statsSig === null && this.status.kind !== 'missing');
    if (!statsChanged && sameSignature(journalSig, this.journal.signature)) return;
    const known = this.journal.signature;
    if (!statsChanged && this.journal.applies && journalSig && known && journalSig.ino === known.ino && journalSig.size > known.size) {
      // Only appended: read the new lines.
      const tail = this.readJournalFrom(this.journal.consumed);
      applyJournal(this.stats, readJournalLines(tail.text).changes);
      this.journal = { ...this.journal, signature: journalSig, consumed: this.journal.consumed + tail.bytes, lines: this.journal.lines + tail.lines };
      this.onRead();
      return;
    }
    const read = readStats(readStoreFile(this.paths.stats));
    this.signature = statsSig;
    this.stats = read.value;
    this.status = read.status;
    const whole = this.readJournalFrom(0);
    const applies = journalAppliesTo(whole.text, statsSig);
    if (applies) applyJournal(this.stats, readJournalLines(whole.text).changes);
    this.journal = { signature: journalSig, consumed: whole.bytes, lines: whole.lines, applies };
    this.onRead();
  }

  /** Lines in the journal that apply to stats.json (0 without one). */
  get journalLines(): number {
    // The first line is the header.
    return this.journal.applies ? Math.max(0, this.journal.lines - 1) : 0;
  }

  /** Whether a journal file exists, applying or not. */
  get hasJournal(): boolean {
    return this.journal.signature !== null;
  }

  /**
   * Appends lines (journalLine) to the journal. A journal that does not apply
   * to stats.json as it is (stale, or half-started by a killed writer) is
   * replaced by a new one naming it. The caller holds the lock and made sure
   * stats.json exists (signature).
   */
  appendJournal(lines: readonly string[]): void {
    const base = this.signature;
    if (!base) throw new Error('the stats journal needs stats.json to apply to');
    const text = lines.join('');
    if (!this.journal.applies) {
      // A store made by an older version has no ignore line for the journal yet (a read may start it).
      ensureGitignore(this.paths);
      writeFileAtomic(this.paths.statsJournal, journalHeader(base) + text, { durable: false });
      const signature = statSignature(this.paths.statsJournal);
      this.journal = { signature, consumed: signature?.size ?? 0, lines: lines.length + 1, applies: true };
      return;
    }
    // After a line cut short by a kill, the next one starts on a line of its own.
    const cut = (this.journal.signature?.size ?? 0) > this.journal.consumed;
    fs.appendFileSync(this.paths.statsJournal, cut ? `\n${text}` : text);
    const signature = statSignature(this.paths.statsJournal);
    this.journal = { signature, consumed: signature?.size ?? 0, lines: this.journal.lines + lines.length + (cut ? 1 : 0), applies: true };
  }

  /**
   * Writes stats.json with every change (compaction), then removes the journal:
   * in this order, a crash between leaves a journal naming the old stats.json,
   * which no reader applies, and the new file holds its changes.
   */
  write(produce: (out: PieceWriter) => void): FileSignature {
    const written = writeTempFileFrom(this.paths.stats, produce, { durable: false });
    replaceWithTemp(written, this.paths.stats);
    this.written(written.signature);
    return written.signature;
  }

  /** write() for a producer that gives way to the event loop (a rendering in slices); the rename on the thread pool. */
  async writeAsync(produce: (out: PieceWriter) => Promise<void>): Promise<FileSignature> {
    const written = await writeTempFileFromAsync(this.paths.stats, produce, { durable: false });
    // Until the new signature is known, a refresh must not take stats.json for another writer's.
    this.writeInFlight = true;
    try {
      await replaceWithTempAsync(written, this.paths.stats);
    } finally {
      this.writeInFlight = false;
    }
    this.written(written.signature);
    return written.signature;
  }

  private written(signature: FileSignature): void {
    this.status = { kind: 'ok' };
    this.signature = signature;
    if (this.journal.signature !== null || fs.existsSync(this.paths.statsJournal)) fs.rmSync(this.paths.statsJournal, { force: true });
    this.journal = NO_JOURNAL;
  }

  /** The complete lines of stats.log from byte `offset` on (a line cut short by a kill is not complete). */
  private readJournalFrom(offset: number): { text: string; bytes: number; lines: number } {
    let bytes: Buffer;
    try {
      const fd = fs.openSync(this.paths.statsJournal, 'r');
      try {
        const size = fs.fstatSync(fd).size;
        bytes = Buffer.alloc(Math.max(0, size - offset));
        let read = 0;
        while (read < bytes.length) {
          const n = fs.readSync(fd, bytes, read, bytes.length - read, offset + read);
          if (n === 0) break;
          read += n;
        }
        bytes = bytes.subarray(0, read);
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { text: '', bytes: 0, lines: 0 };
      throw error;
    }
    const end = bytes.lastIndexOf(0x0a) + 1;
    let lines = 0;
    for (let i = 0; i < end; i++) if (bytes[i] === 0x0a) lines++;
    return { text: bytes.subarray(0, end).toString('utf8'), bytes: end, lines };
  }
}
