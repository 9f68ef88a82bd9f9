/**
 * Guards against: credentials reaching the disk (and so git and prompts). A
 * table of realistic fake secrets, built from pieces at run time (no real key
 * is in this file), is stored in every field (topic, content, summary, tags)
 * through the MCP store_memory tool of `ltm serve` and through `ltm store`, put
 * in a Summary through MemoryStore.updateSummary (the only edit path), and sent
 * as hook session and tool-use IDs. Then EVERY file under .claude/ltm
 * (git-ignored ones included) and the server's stdout/stderr are scanned for
 * each secret, case-insensitively (tags are lowercased): none may be found.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MemoryStore } from '../../src/core/store';
import { mcpClient, postHook } from '../support/serverKit';
import { ensureCliBuilt, ltmRoot } from '../support/storeKit';
import { Processes, TempDirs, allFiles, findStrings, pool, prng, runLtm, startServe, type Finding, type ServeProcess } from './kit';

interface Secret {
  kind: string;
  /** The text as it would be pasted. */
  text: string;
  /** What must never be found on disk (the secret part of `text`). */
  needles: string[];
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;

/** The table of fake secrets, the same on every run. */
function secretTable(): Secret[] {
  const rand = prng('secrets');
  const chars = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[rand.int(0, alphabet.length - 1)]).join('');
  const b64url = (s: string) => Buffer.from(s).toString('base64url');
  const table: Secret[] = [];
  const add = (kind: string, text: string, ...needles: string[]) => table.push({ kind, text, needles: needles.length ? needles : [text] });

  const awsId = ['AK', 'IA', chars(UPPER + '234567', 16)].join('');
  add('AWS access key id', awsId);
  const awsSecret = chars(ALNUM + '/+', 40);
  add('AWS secret key', `aws_secret_access_key = ${awsSecret}`, awsSecret);
  add('GitHub PAT (classic)', ['gh', 'p_', chars(ALNUM, 36)].join(''));
  add('GitHub PAT (fine-grained)', ['github', '_pat_', chars(ALNUM, 22), '_', chars(ALNUM, 59)].join(''));
  add('Anthropic API key', ['sk-', 'ant-', 'api03-', chars(ALNUM + '-_', 93), 'AA'].join(''));
  add('OpenAI API key', ['sk-', 'proj-', chars(ALNUM + '-_', 48)].join(''));
  add('Slack bot token', ['xo', 'xb-', chars(DIGITS, 12), '-', chars(DIGITS, 13), '-', chars(ALNUM, 24)].join(''));
  const hookPath = `T${chars(UPPER + DIGITS, 8)}/B${chars(UPPER + DIGITS, 10)}/${chars(ALNUM, 24)}`;
  add('Slack webhook URL', `https://hooks.slack.com/services/${hookPath}`, hookPath);
  add('Stripe live key', ['sk', '_live_', chars(ALNUM, 24)].join(''));
  add('Google API key', ['AI', 'za', chars(ALNUM + '-_', 35)].join(''));
  const pemLines = Array.from({ length: 3 }, () => chars(ALNUM + '+/', 64));
  add('private key (PEM)', ['-----BEGIN RSA ', 'PRIVATE KEY-----', '\n', pemLines.join('\n'), '\n-----END RSA ', 'PRIVATE KEY-----'].join(''), ...pemLines);
  const jwtPayload = b64url(JSON.stringify({ sub: chars(DIGITS, 10), name: 'Test User', iat: 1_700_000_000 + rand.int(0, 1_000_000) }));
  const jwtSig = chars(ALNUM + '-_', 43);
  add('JWT', [b64url('{"alg":"HS256","typ":"JWT"}'), jwtPayload, jwtSig].join('.'), `${jwtPayload}.${jwtSig}`, jwtSig);
  const bearer = chars(ALNUM, 40);
  add('Authorization: Bearer (opaque)', `Authorization: Bearer ${bearer}`, bearer);
  add('password=hunter2 (short)', ['pass', 'word=', 'hunter2'].join(''), 'hunter2');
  const pgPassword = `Pg${chars(ALNUM, 10)}`;
  add('postgres URL with password', `postgres://app_user:${pgPassword}@db.internal:5432/app`, pgPassword);
  const serviceToken = chars(ALNUM, 32);
  add('SERVICE_TOKEN=<32 high-entropy>', `SERVICE_TOKEN=${serviceToken}`, serviceToken);
  return table;
}

const FIELDS = ['topic', 'content', 'summary', 'tags'] as const;
type Field = (typeof FIELDS)[number];

/** store_memory / ltm store arguments with the secret in one field and plain text elsewhere. */
function fieldsWith(secret: Secret, field: Field, label: string): { topic: string; content: string; summary: string; tags: string[] } {
  const plain = { topic: `Secret test ${label}`, content: `Notes for ${label}.`, summary: `Summary for ${label}.`, tags: ['secret-test'] };
  switch (field) {
    case 'topic':
      return { ...plain, topic: `Deploy with ${secret.text} (${label})` };
    case 'content':
      return { ...plain, content: `We configured the service:\n${secret.text}\nand it worked (${label}).` };
    case 'summary':
      return { ...plain, summary: `Use ${secret.text} for ${label}.` };
    case 'tags':
      return { ...plain, tags: ['secret-test', secret.text] };
  }
}

describe('adversarial: secrets never reach the disk, whatever field they are in', function () {
  this.timeout(150_000);
  const procs = new Processes();
  const dirs = new TempDirs();
  const secrets = secretTable();
  const needles = secrets.flatMap((s) => s.needles);

  before(() => ensureCliBuilt());
  after(async () => {
    await procs.killAll();
    dirs.removeAll();
  });

  /** Labels by memory ID, to say which store put a secret where it was found. */
  function explain(found: Finding[], labels: Map<string, string>, root: string): string {
    const kindOf = (needle: string) => secrets.find((s) => s.needles.includes(needle))!.kind;
    const lines = found.map((f) => {
      const id = /(mem_[0-9a-f]{8})\.md$/.exec(f.where)?.[1];
      const where = f.where.startsWith(root) ? path.relative(root, f.where) : f.where;
      return `${kindOf(f.needle)} in ${where}${id && labels.has(id) ? ` (stored as ${labels.get(id)})` : ''}`;
    });
    return [...new Set(lines)].sort().join('\n  ');
  }

  /** The secrets went through the store and were replaced (not silently dropped): markers are on disk. */
  function assertRedactionsSeen(root: string, atLeast: number): void {
    const marked = allFiles(path.join(root, 'memories')).filter((f) => /\[redacted/i.test(fs.readFileSync(f, 'utf8'))).length;
    assert.ok(marked >= atLeast, `only ${marked} memory files hold a redaction marker (expected at least ${atLeast})`);
  }

  it('the scan itself finds a planted secret, in any case (control)', () => {
    const dir = dirs.make('ltm-adv-secrets-control-');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'x.json'), `{"tag": ${JSON.stringify(needles[0]!.toLowerCase())}}`);
    const found = findStrings(needles, [dir], { output: `prefix ${needles[3]!.toUpperCase()} suffix` });
    assert.deepEqual(found.map((f) => [f.needle, path.basename(f.where)]), [
      [needles[0], 'x.json'],
      [needles[3], 'output'],
    ]);
  });

  function report(what: string, tried: number, found: Finding[], labels: Map<string, string>, root: string): void {
    const kinds = new Set(found.map((f) => secrets.find((s) => s.needles.includes(f.needle))!.kind));
    console.log(`      secrets (${what}): ${secrets.length} secret shapes, ${tried} stores tried; ${kinds.size} shapes found on disk or in output${kinds.size ? `: ${[...kinds].join(', ')}` : ''}`);
    assert.equal(found.length, 0, `secrets found (${what}):\n  ${explain(found, labels, root)}`);
  }

  it('through the MCP store_memory tool of ltm serve, in each field (then half of them forgotten into archives/)', async () => {
    const project = dirs.make('ltm-adv-secrets-mcp-');
    const { proc, info } = await startServe(procs, project);
    const labels = new Map<string, string>();
    let tried = 0;
    let client: Client | undefined;
    try {
      client = await mcpClient(info.port, info.token, 'adv-secrets');
      const ids: string[] = [];
      for (const secret of secrets) {
        for (const field of FIELDS) {
          const label = `${secret.kind} / mcp ${field}`;
          const args = fieldsWith(secret, field, `s${tried}`);
          tried++;
          const res = await client.callTool({ name: 'store_memory', arguments: args });
          if (!res.isError) {
            const id = (res.structuredContent as { id: string }).id;
            labels.set(id, label);
            ids.push(id);
          }
        }
      }
      for (const id of ids.filter((_, i) => i % 2 === 0)) {
        const res = await client.callTool({ name: 'forget', arguments: { id } });
        assert.notEqual(res.isError, true, JSON.stringify(res.content));
      }
      assert.ok(ids.length >= secrets.length * 3, `only ${ids.length} of ${tried} stores were accepted`);
    } finally {
      await client?.close();
    }
    proc.child.kill('SIGTERM');
    await proc.exited;
    const root = ltmRoot(project);
    report('MCP', tried, findStrings(needles, [root], { 'ltm serve stdout': proc.stdout(), 'ltm serve stderr': proc.stderr() }), labels, root);
    assertRedactionsSeen(root, secrets.length);
  });

  it('through ltm store (the CLI), in each field (topic, content and summary in one call; tags in another)', async () => {
    const project = dirs.make('ltm-adv-secrets-cli-');
    const labels = new Map<string, string>();
    const tasks: (() => Promise<void>)[] = [];
    let tried = 0;
    for (const secret of secrets) {
      const text = fieldsWith(secret, 'topic', `c${tried}`);
      const withText = { topic: text.topic, content: fieldsWith(secret, 'content', `c${tried}`).content, summary: fieldsWith(secret, 'summary', `c${tried}`).summary, tags: ['secret-test'] };
      const withTag = fieldsWith(secret, 'tags', `c${tried}`);
      for (const [label, args] of [
        [`${secret.kind} / cli topic+content+summary`, withText],
        [`${secret.kind} / cli tags`, withTag],
      ] as const) {
        tried++;
        tasks.push(async () => {
          const r = await runLtm(procs, ['store', '--project', project, '--topic', args.topic, '--content', args.content, '--summary', args.summary, '--tags', args.tags.join(','), '--json']);
          if (r.status === 0) labels.set((JSON.parse(r.stdout) as { id: string }).id, label);
        });
      }
    }
    await pool(4, tasks);
    assert.ok(labels.size >= secrets.length, `only ${labels.size} of ${tried} CLI stores were accepted`);
    const root = ltmRoot(project);
    report('CLI', tried, findStrings(needles, [root]), labels, root);
    assertRedactionsSeen(root, secrets.length);
  });

  it('through MemoryStore.updateSummary (the Summary edit of the VS Code panel)', async () => {
    const project = dirs.make('ltm-adv-secrets-edit-');
    const labels = new Map<string, string>();
    const store = MemoryStore.open(project);
    let tried = 0;
    try {
      for (const secret of secrets) {
        const { memory } = await store.store({ topic: `Edited summary ${tried}`, content: 'Plain content.' });
        labels.set(memory.id, `${secret.kind} / updateSummary`);
        tried++;
        await store.updateSummary(memory.id, `Use ${secret.text} here.`).catch(() => undefined);
      }
    } finally {
      store.dispose();
    }
    const root = ltmRoot(project);
    report('updateSummary', tried, findStrings(needles, [root]), labels, root);
  });

  it('as hook session_id and tool_use_id values (state.json is on disk too)', async () => {
    const project = dirs.make('ltm-adv-secrets-hooks-');
    const { proc, info } = await startServe(procs, project);
    let tried = 0;
    try {
      for (const secret of secrets) {
        for (const event of ['session_start', 'pre_tool_use', 'post_tool_use', 'pre_compact']) {
          const answer = await postHook(info.port, info.token, event, { session_id: secret.text, tool_use_id: secret.text, tool_response: { stdout: secret.text } });
          assert.ok(answer.status < 500, `${event}: ${answer.status}`);
          tried++;
        }
      }
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    const root = ltmRoot(project);
    report('hooks', tried, findStrings(needles, [root], { 'ltm serve stdout': proc.stdout(), 'ltm serve stderr': proc.stderr() }), new Map(), root);
  });
});

export type { ServeProcess };
