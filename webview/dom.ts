/**
 * Building the page. Strings always become text nodes, so memory text is never
 * parsed as HTML: the views build every element through these helpers.
 */

export type Child = Node | string | null | undefined | false;

/** Builds an element; strings become text nodes, so nothing is ever parsed as HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Record<string, unknown>, ...children: Child[]): HTMLElementTagNameMap[K];
export function h(tag: string, props?: Record<string, unknown>, ...children: Child[]): HTMLElement;
export function h(tag: string, props: Record<string, unknown> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    else if (key === 'className') el.className = String(value);
    else if (key === 'value') (el as HTMLInputElement).value = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return el;
}

export function icon(name: string): HTMLElement {
  return h('span', { className: `codicon codicon-${name}`, 'aria-hidden': 'true' });
}

/** A button that ignores clicks while disabled (the page disables every button while busy). */
export function button(label: string, onClick: () => void, options: { icon?: string; secondary?: boolean; id?: string; disabled?: boolean } = {}): HTMLElement {
  const b = h('vscode-button', { id: options.id, secondary: options.secondary, disabled: options.disabled, icon: options.icon }, label);
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

export function formatDate(iso: string): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/**
 * Names a vscode-textarea or vscode-textfield for screen readers. Focus goes to the field inside its
 * shadow DOM, which is named by the element's `label` property (there is no such attribute): an
 * aria-label on the element alone leaves the focused field nameless.
 */
export function nameField(field: HTMLElement, name: string): void {
  field.setAttribute('aria-label', name);
  (field as HTMLElement & { label: string }).label = name;
}
