/**
 * A tree item has no double-click event: VS Code runs its command on each
 * click. The same item opened twice within DOUBLE_CLICK_MS is taken as a
 * double-click, which pins its memory panel, as a double-click pins an
 * editor's preview tab.
 */
export const DOUBLE_CLICK_MS = 500;

export class RepeatedOpen {
  private last: { key: string; at: number } | null = null;

  /** Records an open of `key`; true when it repeats the previous one within DOUBLE_CLICK_MS. */
  isRepeat(key: string, now: number = Date.now()): boolean {
    const repeat = this.last !== null && this.last.key === key && now - this.last.at <= DOUBLE_CLICK_MS;
    // A third click starts over: three clicks are a double-click and a click.
    this.last = repeat ? null : { key, at: now };
    return repeat;
  }
}
