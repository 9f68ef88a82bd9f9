/**
 * The HTML of LTM's webview panels: the page that loads the view's bundle
 * (one CSP with a nonce, assets from dist/ only), and a page without script
 * for a panel that cannot be restored. Text is escaped: nothing from a
 * memory or a draft is ever parsed as HTML.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { WebviewView } from '../shared/protocol';

/** Each panel's view type: what VS Code keeps the panel under and hands back to its serializer after a reload (package.json: onWebviewPanel). */
export const PANEL_VIEW_TYPES: Readonly<Record<WebviewView, string>> = {
  memory: 'ltm.memory',
  integrity: 'ltm.integrity',
  archives: 'ltm.archives',
  newMemory: 'ltm.newMemory',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The webview options of every panel, new or restored (a restored panel gets them again: they are the extension's rules, not the page's). */
export function panelWebviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist')] };
}

export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, view: WebviewView, title: string): string {
  const nonce = randomBytes(16).toString('base64');
  const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', name)).toString();
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const escapedTitle = escapeHtml(title);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('codicon.css')}" id="vscode-codicon-stylesheet" nonce="${nonce}">
<link rel="stylesheet" href="${asset('webview.css')}" nonce="${nonce}">
<title>${escapedTitle}</title>
</head>
<body data-view="${view}">
<main id="app" aria-live="polite"></main>
<script nonce="${nonce}" src="${asset('webview.js')}"></script>
</body>
</html>`;
}

/**
 * A page with no script: a panel restored after a reload that has nothing to
 * show (its folder is no longer open) says why, and gives the unsaved draft it
 * held as text to copy.
 */
export function unavailableHtml(webview: vscode.Webview, extensionUri: vscode.Uri, heading: string, message: string, draft: string | null): string {
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.css')).toString();
  const csp = ["default-src 'none'", `style-src ${webview.cspSource}`].join('; ');
  const draftBlock = draft === null ? '' : `<section>\n<h2>Your unsaved changes</h2>\n<pre class="content" id="draft">${escapeHtml(draft)}</pre>\n</section>\n`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<link rel="stylesheet" href="${css}">
<title>${escapeHtml(heading)}</title>
</head>
<body>
<main id="app">
<header><h1>${escapeHtml(heading)}</h1></header>
<p id="unavailable">${escapeHtml(message)}</p>
${draftBlock}</main>
</body>
</html>`;
}
