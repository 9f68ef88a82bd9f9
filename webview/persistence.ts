/**
 * What this page keeps with VS Code for a window reload (PersistedPanelState):
 * which panel it is, as the extension says (`identity`), and the draft as the
 * person leaves it. After a reload VS Code hands it to the extension's
 * serializer, which checks it and sends the draft back; a page re-created when
 * its hidden tab is shown again finds the New memory form's fields here too.
 */
import { isNewMemoryInput, type MemoryEdit, type NewMemoryInput, type PanelIdentity, type PersistedPanelState } from '../src/shared/protocol';

/** The part of the VS Code API that keeps a page's state. */
export interface StateApi {
  getState(): unknown;
  setState(state: PersistedPanelState): void;
}

function samePanel(a: PanelIdentity, b: PanelIdentity): boolean {
  if (a.view !== b.view) return false;
  if (a.view === 'archives' || b.view === 'archives') return true;
  return a.folder === b.folder && (a.view !== 'memory' || (b.view === 'memory' && a.id === b.id));
}

export function panelKeeper(api: StateApi) {
  const before = api.getState() as { form?: unknown } | undefined;
  const keptForm = before && typeof before === 'object' && isNewMemoryInput(before.form) ? before.form : null;
  let state: PersistedPanelState | null = null;

  function update(change: Partial<PersistedPanelState>): void {
    if (!state) return; // Not yet told which panel this is: nothing worth restoring.
    state = { ...state, ...change };
    api.setState(state);
  }

  return {
    /** The New memory form's fields as this page kept them before it was re-created, or null. */
    keptForm: (): NewMemoryInput | null => keptForm,
    /** The extension says which panel this is; showing another memory leaves the last one's draft behind. */
    identify(panel: PanelIdentity): void {
      const same = state !== null && samePanel(state.panel, panel);
      state = { panel, edit: same ? state!.edit : null, form: same ? state!.form : (keptForm ?? null) };
      api.setState(state);
    },
    edit: (edit: MemoryEdit | null) => update({ edit }),
    form: (form: NewMemoryInput | null) => update({ form }),
  };
}
