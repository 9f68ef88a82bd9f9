/**
 * state.json as this process last read or wrote it, and the only code that
 * writes it.
 *
 * Writers of the store take its lock; a person editing the file in an
 * editor does not. The file holds the person's settings (config) beside the
 * server's bookkeeping (session counts), and the server rewrites it after
 * sessions, so a write must never put back what it read before a person's
 * save: each update is applied to the state as read, written to a temporary
 * file, and renamed over state.json only if the file is still the one read.
 * If it changed meanwhile, the new file is read and the update applied to it
 * again. What remains is the moment between that look and the rename, a few
 * microseconds instead of the whole write. A state.json that cannot be read
 * (half saved, merge conflict markers) is never written over: the person's
 * text is worth more than counts, and `ltm fix` moves it away first.
 */
import * as fs from 'node:fs';
import { LtmError } from './errors';
import { replaceWithTemp, sameSignature, statSignature, toJsonText, writeTempFile, writeTempFileAsync, type FileSignature, type TempFile } from './files';
import { readState, readStoreFile, stateJson, type JsonFileStatus, type StoreState } from './storeFiles';

/** An update reads and applies again at most this many times when state.json keeps changing under it. */
export const STATE_UPDATE_ATTEMPTS = 5;

export class StateFile {
  state: StoreState = readState(null).value;
  status: JsonFileStatus = { kind: 'missing' };
  /** The file's signature as read or written here; null: absent. */
  signature: FileSignature | null = null;
  /** While this process writes the file without blocking, refresh() keeps off it (the update checks it before the rename). */
  private writing = false;

  /** @param onRead called whenever the file is read again (it changed on disk) */
  constructor(
    private readonly file: string,
    private readonly onRead: () => void = () => undefined,
  ) {}

  /** Reads state.json again if it changed since it was read or written here. */
  refresh(): void {
    if (this.writing) return;
    const signature = statSignature(this.file);
    if (sameSignature(signature, this.signature) && (signature !== null || this.status.kind === 'missing')) return;
    this.read(signature);
  }

  /**
   * Applies `change` to the state and writes state.json (flushed to disk
   * unless not `durable`), applying it again to the file a person saved
   * meanwhile. The caller holds the store's lock; `change` may run more than
   * once, each time on the state as read.
   */
  update<T>(change: (state: StoreState) => T, durable = true): T {
    try {
      for (let attempt = 1; ; attempt++) {
        this.requireReadable();
        const result = change(this.state);
        if (this.replaceIfUnchanged(writeTempFile(this.file, this.text(), { durable }), attempt)) return result;
      }
    } catch (error) {
      this.forgetUnwritten();
      throw error;
    }
  }

  /** update() with the file written on libuv's thread pool: a server goes on answering meanwhile. */
  async updateAsync<T>(change: (state: StoreState) => T, durable = true): Promise<T> {
    try {
      for (let attempt = 1; ; attempt++) {
        this.requireReadable();
        const result = change(this.state);
        let temp: TempFile;
        this.writing = true;
        try {
          temp = await writeTempFileAsync(this.file, this.text(), { durable });
        } finally {
          this.writing = false;
        }
        if (this.replaceIfUnchanged(temp, attempt)) return result;
      }
    } catch (error) {
      this.forgetUnwritten();
      throw error;
    }
  }

  /** Writes the state over whatever state.json holds: `ltm fix`, once it has moved an unreadable file away. */
  writeAnew(): void {
    const temp = writeTempFile(this.file, this.text());
    replaceWithTemp(temp, this.file);
    this.wrote(temp);
  }

  /**
   * Throws unless state.json was read (or is absent): one that cannot be read
   * is never written over (see the top of this file), and what it sets is unknown.
   */
  requireReadable(): void {
    const { status } = this;
    if (status.kind !== 'unreadable' && status.kind !== 'conflicted') return;
    const why = status.kind === 'conflicted' ? 'it holds merge conflict markers' : status.reason;
    throw new LtmError(
      'unreadable',
      `state.json cannot be read (${why}), so its settings are unknown and it is left as it is. Correct it, or run \`ltm fix\` (LTM: Fix integrity), which moves it to quarantine/ and writes a new one.`,
    );
  }

  /**
   * Renames the written file over state.json if the file is still the one read
   * (in the same turn of the event loop as the look); else removes it, reads
   * the file anew and returns false. Throws once `attempt` reaches the limit.
   */
  private replaceIfUnchanged(temp: TempFile, attempt: number): boolean {
    const now = statSignature(this.file);
    if (sameSignature(now, this.signature)) {
      replaceWithTemp(temp, this.file);
      this.wrote(temp);
      return true;
    }
    fs.rmSync(temp.temp, { force: true });
    this.read(now);
    if (attempt >= STATE_UPDATE_ATTEMPTS) {
      throw new LtmError('busy', `state.json changed ${attempt} times while it was being written; nothing was written over it. Try again.`);
    }
    return false;
  }

  /**
   * After an update that failed (a change that threw, a full disk): the state
   * is read from the file again, so that a change reported as failed is not
   * kept here and written later by the next update.
   */
  private forgetUnwritten(): void {
    this.read(statSignature(this.file));
  }

  private read(signature: FileSignature | null): void {
    const read = readState(readStoreFile(this.file));
    this.signature = signature;
    this.state = read.value;
    this.status = read.status;
    this.onRead();
  }

  private wrote(temp: TempFile): void {
    this.signature = temp.signature;
    this.status = { kind: 'ok' };
  }

  private text(): string {
    return toJsonText(stateJson(this.state));
  }
}
