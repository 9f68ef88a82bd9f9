/**
 * WCAG 2 contrast of text against what is behind it, from the colours a
 * browser computed. The page only reports raw computed colours (see
 * `readColours`); the arithmetic runs here, where it is unit-tested.
 */
import type { Locator } from 'playwright-core';

/** WCAG 2.x AA for normal-size text. */
export const WCAG_AA_TEXT = 4.5;

export type Rgba = readonly [r: number, g: number, b: number, a: number];

/** Parses a computed colour as Chromium reports it: `rgb(r, g, b)` or `rgba(r, g, b, a)`. */
export function parseCssColor(value: string): Rgba {
  const m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(value.trim());
  if (!m) throw new Error(`not a computed rgb() colour: ${value}`);
  const alpha = m[4] === undefined ? 1 : m[4].endsWith('%') ? Number(m[4].slice(0, -1)) / 100 : Number(m[4]);
  return [Number(m[1]), Number(m[2]), Number(m[3]), alpha];
}

/** `top` painted over an opaque `bottom` (source-over). */
export function composite(top: Rgba, bottom: Rgba): Rgba {
  const a = top[3];
  return [top[0] * a + bottom[0] * (1 - a), top[1] * a + bottom[1] * (1 - a), top[2] * a + bottom[2] * (1 - a), 1];
}

/** WCAG relative luminance of an sRGB colour (alpha ignored). */
export function relativeLuminance([r, g, b]: Rgba): number {
  const channel = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

export function contrastRatio(a: Rgba, b: Rgba): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * The effective background: the element's own background and its ancestors' (innermost first, up to the
 * first opaque one) painted over each other; white under all if none is opaque, as a browser shows it.
 */
export function effectiveBackground(layers: readonly string[]): Rgba {
  let result: Rgba = [255, 255, 255, 1];
  for (const layer of [...layers].reverse()) result = composite(parseCssColor(layer), result);
  return result;
}

/** What the page reports for one piece of text: its computed colour and the backgrounds behind it. */
export interface TextColours {
  what: string;
  text: string;
  color: string;
  backgrounds: string[];
}

export interface Contrast extends TextColours {
  ratio: number;
}

export function contrastOf(t: TextColours): Contrast {
  const background = effectiveBackground(t.backgrounds);
  return { ...t, ratio: contrastRatio(composite(parseCssColor(t.color), background), background) };
}

/** The little of the DOM the page functions use (the tests compile without the DOM library). */
export interface PageElement {
  readonly shadowRoot: { querySelector(selector: string): PageElement | null; readonly activeElement: PageElement | null } | null;
  readonly parentElement: PageElement | null;
  readonly textContent: string | null;
  readonly ownerDocument: PageDocument;
  getRootNode(): { readonly host?: PageElement };
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
}
export interface PageDocument {
  readonly activeElement: PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  hasFocus(): boolean;
}
export interface PageWindow {
  getComputedStyle(element: PageElement): { readonly color: string; readonly backgroundColor: string };
}

/**
 * Reads, in a webview, the computed text colour and background chain of every element matching each
 * selector. A custom element with a shadow root (vscode-badge) is measured at its `.root`, where its
 * text is painted. Written without named inner functions: the page gets this function's source as is.
 */
export async function readColours(body: Locator, selectors: Record<string, string>): Promise<TextColours[]> {
  return body.evaluate((bodyElement, wanted) => {
    const win = globalThis as unknown as PageWindow;
    const found: TextColours[] = [];
    for (const [what, selector] of Object.entries(wanted)) {
      for (const host of Array.from((bodyElement as unknown as PageElement).ownerDocument.querySelectorAll(selector))) {
        const target = host.shadowRoot?.querySelector('.root') ?? host;
        const backgrounds: string[] = [];
        let node: PageElement | null = target;
        while (node) {
          const background = win.getComputedStyle(node).backgroundColor;
          backgrounds.push(background);
          if (background.startsWith('rgb(')) break;
          node = node.parentElement ?? node.getRootNode().host ?? null;
        }
        found.push({ what, text: (host.textContent ?? '').trim().replace(/\s+/g, ' '), color: win.getComputedStyle(target).color, backgrounds });
      }
    }
    return found;
  }, selectors);
}
