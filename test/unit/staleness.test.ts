import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createAnchor, parseAnchorSpec } from '../../src/core/anchors';
import { StalenessTracker, followedAnchors } from '../../src/core/staleness';
import { gitRenameLookup } from '../../src/servers/gitRenames';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('staleness', () => {
  let project: string;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    fs.writeFileSync(path.join(project, file), text);
  };
  const anchor = (spec: string) => {
    const parsed = parseAnchorSpec(project, spec);
    return createAnchor(parsed, fs.readFileSync(path.join(project, parsed.path), 'utf8'));
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

  beforeEach(() => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'ltm-stale-'));
    write('src/a.ts', numbered(40));
    write('src/b.ts', numbered(10));
  });
  afterEach(() => fs.rmSync(project, { recursive: true, force: true }));

  it('is fresh until the anchored lines change, then says which anchor and why', () => {
    const anchors = [anchor('src/a.ts#L10-12'), anchor('src/b.ts')];
    const tracker = new StalenessTracker(project);
    assert.deepEqual(tracker.report(anchors).reasons, []);
    write('src/a.ts', numbered(40).replace('line 11\n', 'line eleven\n'));
    const report = tracker.report(anchors);
    assert.equal(report.stale, true);
    assert.deepEqual(report.reasons, ['src/a.ts#L10-12: the lines changed']);
    fs.rmSync(path.join(project, 'src/b.ts'));
    assert.deepEqual(tracker.report(anchors).reasons, ['src/a.ts#L10-12: the lines changed', 'src/b.ts: the file is gone']);
  });

  it('is not stale when lines only moved, and says where they are now', () => {
    const anchors = [anchor('src/a.ts#L10-12'), anchor('src/b.ts')];
    const tracker = new StalenessTracker(project);
    write('src/a.ts', `// header\n// more\n${numbered(40)}`);
    const report = tracker.report(anchors);
    assert.equal(report.stale, false);
    assert.deepEqual(followedAnchors(report)?.map((a) => a.lines), [[12, 14], undefined]);
    assert.equal(followedAnchors(tracker.report([anchors[1]!])), null, 'nothing to follow');
  });

  it('reads a file again only when its signature changes', () => {
    const anchors = [anchor('src/a.ts#L10-12')];
    const file = path.join(project, 'src/a.ts');
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    fs.utimesSync(file, mtime, mtime);
    const tracker = new StalenessTracker(project);
    tracker.report(anchors);
    // Same size and mtime, other text: not read again (the cached answer stands)...
    fs.writeFileSync(file, numbered(40).replace('line 11\n', 'LINE 11\n'));
    fs.utimesSync(file, mtime, mtime);
    assert.equal(tracker.report(anchors).stale, false, 'a signature match is trusted');
    // ...and once the mtime moves, it is.
    fs.utimesSync(file, new Date(mtime.getTime() + 5000), new Date(mtime.getTime() + 5000));
    assert.equal(tracker.report(anchors).stale, true);
  });

  it('follows a file git saw renamed (committed or staged), and is stale when no rename is known', () => {
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
    const anchors = [anchor('src/a.ts#L10-12'), anchor('src/b.ts')];
    git('mv', 'src/a.ts', 'src/alpha.ts');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'rename');
    git('mv', 'src/alpha.ts', 'src/beta.ts');
    // Without git's help the file is gone.
    assert.deepEqual(new StalenessTracker(project).report(anchors).reasons, ['src/a.ts#L10-12: the file is gone']);
    const tracker = new StalenessTracker(project, gitRenameLookup(project));
    const report = tracker.report(anchors);
    assert.equal(report.stale, false, JSON.stringify(report.reasons));
    assert.equal(report.anchors[0]!.renamedTo, 'src/beta.ts', 'followed through a commit and the index');
    assert.deepEqual(followedAnchors(report)?.[0], { ...anchors[0]!, path: 'src/beta.ts' });
    // A file deleted for good stays gone.
    fs.rmSync(path.join(project, 'src/b.ts'));
    assert.deepEqual(new StalenessTracker(project, gitRenameLookup(project)).report(anchors).reasons, ['src/b.ts: the file is gone']);
  });

  it('calls a renamed file whose anchored lines changed stale, under the name the memory knows', () => {
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
    const anchors = [anchor('src/a.ts#L10-12')];
    git('mv', 'src/a.ts', 'src/alpha.ts');
    fs.writeFileSync(path.join(project, 'src/alpha.ts'), numbered(40).replace('line 11\n', 'line eleven\n'));
    git('add', 'src/alpha.ts');
    const report = new StalenessTracker(project, gitRenameLookup(project)).report(anchors);
    assert.deepEqual(report.reasons, ['src/a.ts#L10-12: renamed to src/alpha.ts, and the lines changed']);
    assert.equal(followedAnchors(report), null, 'a stale anchor keeps what the memory was written against');
  });

  it('works for a project in a folder of a larger repository', () => {
    const repo = project;
    project = path.join(repo, 'packages/app');
    write('lib/x.ts', numbered(5));
    execFileSync('git', ['init', '-q'], { cwd: repo });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.'], { cwd: repo });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one'], { cwd: repo });
    const anchors = [anchor('lib/x.ts#L2-3')];
    execFileSync('git', ['mv', 'packages/app/lib/x.ts', 'packages/app/lib/y.ts'], { cwd: repo });
    const report = new StalenessTracker(project, gitRenameLookup(project)).report(anchors);
    assert.equal(report.anchors[0]!.renamedTo, 'lib/y.ts');
    project = repo;
  });
});
