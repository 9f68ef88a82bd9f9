/**
 * The browser side of LTM's webviews: wires the extension's messages to the
 * view this page shows (memory panel, integrity panel, archives view or New
 * memory form). The views are in their own modules; everything a memory
 * contains is put on the page with textContent or as an element's value:
 * never parsed as HTML.
 */
// Every custom element the views create is registered here, before anything renders.
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import '@vscode-elements/elements/dist/vscode-label/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { FromWebview, ToWebview, WebviewView } from '../src/shared/protocol';
import { archivesView } from './archivesView';
import { h } from './dom';
import { integrityView } from './integrityView';
import { memoryView } from './memoryView';
import { newMemoryView } from './newMemoryView';
import { notice, setBusy, type PostMessage } from './page';
import { panelKeeper, type StateApi } from './persistence';

interface VsCodeApi extends StateApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

// acquireVsCodeApi may be called once per page: the views get only these functions.
const vscode = acquireVsCodeApi();
const keeper = panelKeeper(vscode);
const post: PostMessage = (message) => {
  // The memory panel's edit as it stands, kept for a window reload as the extension is told of it.
  if (message.type === 'edit') keeper.edit(message.edit);
  vscode.postMessage(message);
};
const app = document.getElementById('app')!;
const view = (document.body.dataset.view ?? 'memory') as WebviewView;

const memory = memoryView(app, post);
const integrity = integrityView(app, post);
const archives = archivesView(app, post);
const newMemory = newMemoryView(app, post, keeper.form);

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'identity':
      keeper.identify(message.panel);
      break;
    case 'memory':
      if (view !== 'memory') break;
      keeper.edit(message.panel.edit);
      memory.show(message.memory, message.constants, message.panel);
      break;
    case 'saved':
      keeper.edit(null);
      memory.saved(message.id);
      break;
    case 'conflict':
      memory.conflict(message.id, message.fields, message.theirs);
      break;
    case 'memoryGone':
      memory.gone(message.message, message.draft);
      break;
    case 'integrity':
      if (view === 'integrity') integrity.show(message.report, message.fix);
      break;
    case 'archives':
      if (view === 'archives') archives.show(message.query, message.items);
      break;
    case 'busy':
      setBusy(message.busy);
      break;
    case 'notice':
      notice(message.level, message.message);
      break;
    case 'newMemoryForm':
      // The fields the extension restored after a reload, else those this page kept before its tab was hidden.
      if (view === 'newMemory') newMemory.show(message.form, message.draft ?? keeper.keptForm());
      break;
    case 'formError':
      // An error about no field of the form (or a field it lacks) is the page's notice.
      if (!newMemory.error(message.field, message.message)) notice('error', message.message);
      break;
    default: {
      // A message type added to the protocol without a case here fails to compile.
      const _unhandled: never = message;
    }
  }
});

app.append(h('vscode-progress-ring', { 'aria-label': 'Loading' }));
post({ type: 'ready' });
