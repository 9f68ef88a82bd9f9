/**
 * The Get Started walkthrough as VS Code reads it from the manifest: its
 * steps, what completes each, the commands its buttons run, and its Markdown
 * files, which must be in the package (.vscodeignore ships listed files only).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from './hostKit';

interface Step {
  id: string;
  title: string;
  description: string;
  media: { markdown?: string };
  completionEvents: string[];
}

interface Manifest {
  contributes: { walkthroughs?: { id: string; title: string; steps: Step[] }[]; commands: { command: string }[] };
}

describe('the Get Started walkthrough', () => {
  const extension = () => vscode.extensions.getExtension(EXTENSION_ID)!;
  const walkthrough = () => (extension().packageJSON as Manifest).contributes.walkthroughs?.find((w) => w.id === 'ltm.getStarted');

  it('has the five steps, each completed by doing it', () => {
    const w = walkthrough();
    assert.ok(w, 'contributes.walkthroughs has ltm.getStarted');
    assert.deepEqual(
      w.steps.map((s) => [s.title, s.completionEvents]),
      [
        ['Initialize memory', ['onCommand:ltm.initialize']],
        ['Set up Claude Code', ['onCommand:ltm.setUpClaude']],
        ['Your first memory', ['onCommand:ltm.newMemory', 'onCommand:ltm.remember']],
        ['Review what Claude stores', ['onSettingChanged:ltm.reviewNewMemories', 'onCommand:ltm.review']],
        ['Install the command-line tool', ['onCommand:ltm.installCli']],
      ],
    );
  });

  it('links only commands that exist', async () => {
    const contributed = new Set((extension().packageJSON as Manifest).contributes.commands.map((c) => c.command));
    const all = new Set(await vscode.commands.getCommands(true));
    for (const step of walkthrough()!.steps) {
      const linked = [...step.description.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1]!);
      assert.ok(linked.length > 0, `${step.id} has a button`);
      for (const command of linked) assert.ok(command.startsWith('ltm.') ? contributed.has(command) : all.has(command), `${step.id} links ${command}`);
    }
  });

  it('ships every step\'s Markdown in the package', () => {
    const root = extension().extensionPath;
    const media = walkthrough()!.steps.map((s) => s.media.markdown);
    assert.ok(media.every((m): m is string => typeof m === 'string' && m.startsWith('media/walkthrough/')), JSON.stringify(media));
    for (const file of media) assert.match(fs.readFileSync(path.join(root, file), 'utf8'), /^# /, `${file} is a Markdown page`);
    // What vsce would package, as .vscodeignore decides.
    const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
    const listed = spawnSync(process.execPath, [vsce, 'ls', '--no-dependencies'], { cwd: root, encoding: 'utf8' });
    assert.equal(listed.status, 0, listed.stderr);
    const packaged = new Set(listed.stdout.split('\n').map((l) => l.trim()));
    for (const file of media) assert.ok(packaged.has(file), `${file} is in the .vsix (vsce ls: ${listed.stdout})`);
  });
});
