/**
 * The integrity panel: what the check found, Fix (optionally deleting orphaned
 * archives), and what the fix did. Problem details are memory text: put on the
 * page as text only.
 */
import type { FixView, IntegrityView, ProblemView } from '../src/shared/protocol';
import { countOf } from '../src/shared/wording';
import { button, h, icon } from './dom';
import type { PostMessage } from './page';

export function integrityView(app: HTMLElement, post: PostMessage) {
  // Outlives a render: every check and fix rebuilds the checkbox, which keeps the user's choice.
  let cleanArchives = false;

  function show(report: IntegrityView, fix: FixView | null): void {
    const checkbox = h('vscode-checkbox', { id: 'clean-archives', checked: cleanArchives, label: 'Also delete orphaned archives (by default they are kept and listed as restorable)' });
    checkbox.addEventListener('change', (e) => (cleanArchives = Boolean((e.target as HTMLInputElement).checked)));
    const errors = report.problems.filter((p) => p.level === 'error').length;
    const warnings = report.problems.length - errors;
    const withWarnings = warnings > 0 ? `, with ${countOf(warnings, 'warning')} for you to correct.` : '.';
    const status = h(
      'p',
      { id: 'integrity-status', className: report.healthy ? 'healthy' : 'unhealthy' },
      icon(report.healthy ? 'pass-filled' : 'warning'),
      report.healthy ? (warnings > 0 ? ` Healthy${withWarnings}` : ' Healthy: no integrity issues found.') : ` ${countOf(errors, 'issue')} found${withWarnings}`,
    );
    const counts = h('dl', { className: 'facts' }, ...Object.entries(report.counts).flatMap(([k, v]) => [h('dt', {}, k.replace(/_/g, ' ')), h('dd', {}, String(v))]));
    const groups = new Map<string, { level: ProblemView['level']; details: string[] }>();
    for (const p of report.problems) {
      const group = groups.get(p.title) ?? { level: p.level, details: [] };
      group.details.push(p.detail);
      groups.set(p.title, group);
    }
    // A warning says so, and that fix will not touch it: it is text a person wrote.
    const section = (title: string, { level, details }: { level: ProblemView['level']; details: string[] }) =>
      h(
        'section',
        { className: level === 'warning' ? 'problem warning' : 'problem' },
        h('h3', {}, ...(level === 'warning' ? [icon('info'), ' Warning: '] : []), title),
        h('ul', {}, ...details.map((d) => h('li', {}, d))),
        level === 'warning' ? h('p', { className: 'hint' }, 'Fix leaves these as they are: correct them in the memory files.') : null,
      );
    const problems = h('div', { id: 'problems' }, ...[...groups].map(([title, group]) => section(title, group)));
    const done = fix
      ? h('section', { id: 'fix-result' }, h('h2', {}, 'What fix did'), fix.actions.length === 0 ? h('p', {}, 'Nothing needed repair.') : h('ul', {}, ...fix.actions.map((a) => h('li', {}, a))))
      : null;
    app.replaceChildren(
      h('header', {}, h('h1', {}, `Integrity of ${report.folder}`)),
      h(
        'div',
        { className: 'actions' },
        button('Check again', () => post({ type: 'runCheck' }), { icon: 'refresh', secondary: true, id: 'run-check' }),
        button('Fix', () => post({ type: 'runFix', cleanArchives }), { icon: 'wrench', id: 'run-fix', disabled: report.healthy && !fix }),
      ),
      checkbox,
      status,
      done ?? '',
      problems,
      h('section', {}, h('h2', {}, 'Counts'), counts),
    );
  }

  return { show };
}
