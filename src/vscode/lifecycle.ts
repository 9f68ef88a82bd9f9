/**
 * Ownership of disposables: whatever a component creates (listeners, watchers,
 * servers, views) it registers with itself, and disposing it disposes them all.
 */
import * as vscode from 'vscode';

export abstract class DisposableOwner implements vscode.Disposable {
  private readonly owned: vscode.Disposable[] = [];
  private disposed = false;

  protected own<T extends vscode.Disposable>(disposable: T): T {
    if (this.disposed) disposable.dispose();
    else this.owned.push(disposable);
    return disposable;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.owned.splice(0).reverse()) {
      try {
        d.dispose();
      } catch {
        // One failing disposable must not keep the others alive.
      }
    }
  }
}
