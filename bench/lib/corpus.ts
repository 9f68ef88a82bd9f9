/**
 * A synthetic but realistic corpus of memories: what a developer would ask
 * Claude Code to remember about a codebase. Each memory belongs to one or two
 * domains, so topics, contents and tags agree with each other and a search
 * for "postgres migration" finds memories about exactly that.
 */
import { Random } from './random';

interface Domain {
  name: string;
  /** Terms of the domain (nouns and names). */
  terms: readonly string[];
  /** Tags that memories of the domain carry. */
  tags: readonly string[];
  /** Identifiers, commands and paths quoted in contents. */
  code: readonly string[];
}

const DOMAINS: readonly Domain[] = [
  {
    name: 'database',
    terms: ['postgres', 'migration', 'schema', 'index', 'transaction', 'deadlock', 'query', 'planner', 'vacuum', 'replica', 'connection', 'pool', 'foreign', 'constraint', 'column', 'table', 'cursor', 'isolation', 'rollback', 'sequence', 'sqlite', 'mysql', 'orm', 'prisma', 'partition'],
    tags: ['database', 'postgres', 'sql', 'migration', 'sqlite', 'orm'],
    code: ['SELECT ... FOR UPDATE', 'pg_stat_activity', 'prisma migrate deploy', 'db/migrations/0042_add_index.sql', 'EXPLAIN ANALYZE', 'statement_timeout'],
  },
  {
    name: 'frontend',
    terms: ['react', 'component', 'hook', 'render', 'state', 'props', 'reducer', 'context', 'suspense', 'hydration', 'router', 'form', 'modal', 'stylesheet', 'tailwind', 'layout', 'accessibility', 'focus', 'keyboard', 'viewport', 'animation', 'vue', 'svelte', 'selector', 'memoization'],
    tags: ['react', 'frontend', 'css', 'accessibility', 'vue', 'ui'],
    code: ['useEffect', 'useMemo', 'React.StrictMode', 'src/components/Modal.tsx', 'aria-live', 'getBoundingClientRect'],
  },
  {
    name: 'build',
    terms: ['webpack', 'esbuild', 'vite', 'bundle', 'sourcemap', 'tsconfig', 'compiler', 'transpile', 'loader', 'plugin', 'minify', 'treeshaking', 'chunk', 'artifact', 'cache', 'monorepo', 'workspace', 'dependency', 'lockfile', 'package', 'typescript', 'declaration', 'target', 'polyfill', 'babel'],
    tags: ['build', 'typescript', 'npm', 'esbuild', 'webpack', 'monorepo'],
    code: ['npm run build', 'tsconfig.json', 'esbuild.mjs', 'moduleResolution', 'npm ci --omit=dev', 'pnpm-workspace.yaml'],
  },
  {
    name: 'testing',
    terms: ['test', 'mocha', 'jest', 'fixture', 'mock', 'stub', 'snapshot', 'assertion', 'coverage', 'flaky', 'timeout', 'runner', 'integration', 'e2e', 'playwright', 'harness', 'seed', 'property', 'regression', 'suite', 'teardown', 'setup', 'parallel', 'isolation', 'golden'],
    tags: ['testing', 'ci', 'flaky-tests', 'e2e', 'fixtures'],
    code: ['npm run test:unit', 'test/fixtures/', 'fast-check', 'beforeEach', '--forbid-only', 'playwright.config.ts'],
  },
  {
    name: 'networking',
    terms: ['http', 'request', 'response', 'header', 'proxy', 'dns', 'socket', 'latency', 'retry', 'backoff', 'timeout', 'keepalive', 'tls', 'certificate', 'websocket', 'cors', 'cookie', 'gateway', 'loadbalancer', 'endpoint', 'grpc', 'stream', 'payload', 'compression', 'redirect'],
    tags: ['networking', 'http', 'api', 'timeouts', 'grpc', 'dns'],
    code: ['Access-Control-Allow-Origin', 'AbortController', 'undici', 'curl -v', 'ECONNRESET', 'src/server/api.ts'],
  },
  {
    name: 'security',
    terms: ['authentication', 'authorization', 'token', 'session', 'oauth', 'jwt', 'csrf', 'xss', 'sanitizer', 'permission', 'role', 'audit', 'encryption', 'hashing', 'bcrypt', 'secret', 'vault', 'rotation', 'scope', 'login', 'signature', 'nonce', 'policy', 'sandbox', 'injection'],
    tags: ['security', 'auth', 'oauth', 'secrets', 'permissions'],
    code: ['Content-Security-Policy', 'SameSite=Lax', 'src/auth/session.ts', 'jose', 'crypto.timingSafeEqual', 'helmet'],
  },
  {
    name: 'deployment',
    terms: ['docker', 'kubernetes', 'container', 'image', 'helm', 'deployment', 'rollout', 'probe', 'replica', 'node', 'cluster', 'terraform', 'pipeline', 'environment', 'staging', 'production', 'canary', 'registry', 'volume', 'ingress', 'autoscaler', 'manifest', 'secret', 'namespace', 'release'],
    tags: ['deployment', 'docker', 'kubernetes', 'terraform', 'ci', 'release'],
    code: ['docker compose up', 'kubectl rollout status', 'Dockerfile', 'helm upgrade --install', '.github/workflows/deploy.yml', 'readinessProbe'],
  },
  {
    name: 'performance',
    terms: ['profiler', 'latency', 'throughput', 'allocation', 'garbage', 'heap', 'memory', 'leak', 'cache', 'invalidation', 'batching', 'debounce', 'throttle', 'flamegraph', 'benchmark', 'hotpath', 'serialization', 'compression', 'worker', 'thread', 'eventloop', 'backpressure', 'queue', 'percentile', 'regression'],
    tags: ['performance', 'caching', 'memory-leak', 'profiling', 'concurrency'],
    code: ['--cpu-prof', 'performance.now()', 'process.memoryUsage()', 'worker_threads', 'setImmediate', 'node --inspect'],
  },
  {
    name: 'git',
    terms: ['git', 'branch', 'rebase', 'merge', 'conflict', 'commit', 'hook', 'submodule', 'history', 'bisect', 'tag', 'remote', 'fork', 'review', 'changelog', 'signoff', 'squash', 'cherrypick', 'stash', 'worktree', 'blame', 'gitignore', 'lfs', 'checkout', 'upstream'],
    tags: ['git', 'github', 'code-review', 'conventions', 'release'],
    code: ['git rebase -i', 'git bisect run', '.husky/pre-commit', 'git worktree add', 'CODEOWNERS', 'git lfs track'],
  },
  {
    name: 'python',
    terms: ['python', 'virtualenv', 'poetry', 'pip', 'django', 'flask', 'fastapi', 'pydantic', 'asyncio', 'decorator', 'generator', 'typing', 'mypy', 'pytest', 'celery', 'wheel', 'interpreter', 'gil', 'dataclass', 'notebook', 'pandas', 'numpy', 'uvicorn', 'alembic', 'ruff'],
    tags: ['python', 'django', 'fastapi', 'asyncio', 'pytest'],
    code: ['python -m venv .venv', 'pyproject.toml', 'pytest -k', 'asyncio.gather', 'alembic upgrade head', 'ruff check --fix'],
  },
  {
    name: 'rust',
    terms: ['rust', 'cargo', 'borrow', 'lifetime', 'trait', 'crate', 'async', 'tokio', 'unsafe', 'macro', 'ownership', 'clippy', 'feature', 'serde', 'enum', 'generic', 'closure', 'panic', 'result', 'iterator', 'arc', 'mutex', 'channel', 'wasm', 'ffi'],
    tags: ['rust', 'cargo', 'async', 'wasm', 'concurrency'],
    code: ['cargo clippy -- -D warnings', 'Cargo.toml', '#[derive(Serialize)]', 'tokio::spawn', 'Arc<Mutex<T>>', 'cargo test --workspace'],
  },
  {
    name: 'observability',
    terms: ['logging', 'logger', 'metrics', 'tracing', 'span', 'dashboard', 'alert', 'sentry', 'prometheus', 'grafana', 'opentelemetry', 'exporter', 'sampling', 'correlation', 'incident', 'oncall', 'runbook', 'healthcheck', 'uptime', 'error', 'stacktrace', 'breadcrumb', 'verbosity', 'retention', 'aggregation'],
    tags: ['logging', 'monitoring', 'observability', 'debugging', 'incidents'],
    code: ['LOG_LEVEL=debug', 'otel-collector.yaml', 'Sentry.captureException', 'src/lib/logger.ts', 'http_requests_total', 'pino'],
  },
  {
    name: 'tooling',
    terms: ['vscode', 'extension', 'eslint', 'prettier', 'formatter', 'linter', 'editor', 'debugger', 'breakpoint', 'terminal', 'shell', 'script', 'makefile', 'cli', 'argument', 'flag', 'config', 'dotfile', 'environment', 'variable', 'path', 'windows', 'macos', 'linux', 'wsl'],
    tags: ['tooling', 'vscode', 'lint', 'cli', 'windows', 'config'],
    code: ['.vscode/launch.json', 'eslint.config.mjs', 'npx prettier --check .', 'Makefile', 'process.env.PATH', 'code --install-extension'],
  },
];

const VERBS: readonly (readonly [string, string, string])[] = [
  ['break', 'breaks', 'breaking'], ['cache', 'caches', 'caching'], ['retry', 'retries', 'retrying'],
  ['block', 'blocks', 'blocking'], ['leak', 'leaks', 'leaking'], ['fail', 'fails', 'failing'],
  ['hang', 'hangs', 'hanging'], ['drop', 'drops', 'dropping'], ['skip', 'skips', 'skipping'],
  ['reload', 'reloads', 'reloading'], ['validate', 'validates', 'validating'], ['parse', 'parses', 'parsing'],
  ['serialize', 'serializes', 'serializing'], ['lock', 'locks', 'locking'], ['migrate', 'migrates', 'migrating'],
  ['rebuild', 'rebuilds', 'rebuilding'], ['reject', 'rejects', 'rejecting'], ['flush', 'flushes', 'flushing'],
  ['resolve', 'resolves', 'resolving'], ['duplicate', 'duplicates', 'duplicating'], ['truncate', 'truncates', 'truncating'],
  ['override', 'overrides', 'overriding'], ['invalidate', 'invalidates', 'invalidating'], ['throttle', 'throttles', 'throttling'],
  ['deploy', 'deploys', 'deploying'], ['compile', 'compiles', 'compiling'], ['swallow', 'swallows', 'swallowing'],
  ['corrupt', 'corrupts', 'corrupting'], ['shadow', 'shadows', 'shadowing'], ['race', 'races', 'racing'],
];

const ADJECTIVES = [
  'stale', 'slow', 'flaky', 'intermittent', 'silent', 'nested', 'concurrent', 'legacy', 'missing', 'duplicate',
  'expensive', 'unbounded', 'implicit', 'default', 'partial', 'cold', 'warm', 'oversized', 'orphaned', 'transient',
  'nondeterministic', 'recursive', 'shared', 'global', 'local', 'optional', 'deprecated', 'experimental', 'brittle', 'hidden',
];

const NOUNS = [
  'bug', 'workaround', 'convention', 'decision', 'edge case', 'failure', 'fix', 'gotcha', 'limit', 'pattern',
  'problem', 'regression', 'setting', 'symptom', 'tradeoff', 'upgrade', 'behaviour', 'default', 'handler', 'module',
  'service', 'worker', 'job', 'config', 'layer', 'boundary', 'contract', 'payload', 'error message', 'warning',
];

const PREPOSITIONS = ['in', 'for', 'with', 'after', 'during', 'behind', 'under', 'across', 'before', 'inside'];

const OPENERS = ['Note', 'Decision', 'Gotcha', 'Context', 'Root cause', 'Workaround', 'Convention', 'Lesson'];

export const IMPORTANCE_TAGS = ['importance:critical', 'importance:important', 'importance:low'] as const;

/** Every tag the corpus uses (without importance tags). */
export const TAG_POOL: readonly string[] = [...new Set(DOMAINS.flatMap((d) => d.tags))].sort();

export interface GeneratedMemory {
  topic: string;
  content: string;
  tags: string[];
  difficulty: number;
}

export interface CorpusOptions {
  minContent: number;
  maxContent: number;
}

const DEFAULT_OPTIONS: CorpusOptions = { minContent: 300, maxContent: 1500 };

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export class Corpus {
  private readonly rng: Random;

  constructor(
    seed: number,
    private readonly options: CorpusOptions = DEFAULT_OPTIONS,
  ) {
    this.rng = new Random(seed);
  }

  /** One memory: a 5-12 word topic, 2-5 paragraphs of 300-1500 characters, 1-4 tags. */
  memory(): GeneratedMemory {
    const r = this.rng;
    const primary = r.pick(DOMAINS);
    const secondary = r.chance(0.4) ? r.pick(DOMAINS) : primary;
    const domains = [primary, secondary];
    return {
      topic: this.topic(domains),
      content: this.content(domains),
      tags: this.tags(primary, secondary),
      difficulty: Math.round((0.1 + r.next() * 0.8) * 100) / 100,
    };
  }

  private term(domains: readonly Domain[]): string {
    return this.rng.pick(this.rng.pick(domains).terms);
  }

  private topic(domains: readonly Domain[]): string {
    const r = this.rng;
    const length = r.int(5, 12);
    const words: string[] = [];
    const slots: (() => string)[] = [
      () => this.term(domains),
      () => this.term(domains),
      () => r.pick(NOUNS).split(' ')[0]!,
      () => r.pick(PREPOSITIONS),
      () => r.pick(ADJECTIVES),
      () => this.term(domains),
      () => r.pick(VERBS)[2],
      () => r.pick(PREPOSITIONS),
      () => this.term(domains),
      () => r.pick(NOUNS).split(' ')[0]!,
      () => r.pick(ADJECTIVES),
      () => this.term(domains),
    ];
    const start = r.int(0, 2);
    for (let i = 0; words.length < length; i++) words.push(slots[(start + i) % slots.length]!());
    // A topic does not end on a preposition.
    if (PREPOSITIONS.includes(words[words.length - 1]!)) words[words.length - 1] = this.term(domains);
    return capitalise(words.join(' '));
  }

  private sentence(domains: readonly Domain[]): string {
    const r = this.rng;
    const t = () => this.term(domains);
    const a = () => r.pick(ADJECTIVES);
    const n = () => r.pick(NOUNS);
    const v = () => r.pick(VERBS);
    const code = () => `\`${r.pick(r.pick(domains).code)}\``;
    const p = () => r.pick(PREPOSITIONS);
    switch (r.int(0, 11)) {
      case 0:
        return `The ${a()} ${t()} ${v()[1]} when the ${t()} ${n()} is ${a()}.`;
      case 1:
        return `We fixed this by ${v()[2]} the ${t()} before ${v()[2]} the ${t()}.`;
      case 2:
        return `Running ${code()} shows the ${t()} ${n()} ${p()} the ${t()}.`;
      case 3:
        return `Avoid ${v()[2]} the ${t()} ${p()} a ${t()} handler; it ${v()[1]} the ${n()}.`;
      case 4:
        return `After upgrading the ${t()}, the ${t()} started ${v()[2]} ${a()} ${t()} entries.`;
      case 5:
        return `${r.pick(OPENERS)}: ${t()} and ${t()} share the same ${n()}, so ${v()[2]} one ${v()[1]} the other.`;
      case 6:
        return `The ${n()} lives in ${code()} and is ${a()} by design.`;
      case 7:
        return `If the ${t()} ${v()[1]}, check the ${a()} ${t()} first; it is usually the ${t()} ${n()}.`;
      case 8:
        return `Do not ${v()[0]} the ${t()} ${p()} ${t()}: the ${a()} ${n()} ${v()[1]} under load.`;
      case 9:
        return `This ${n()} only shows up ${p()} ${t()} with a ${a()} ${t()}.`;
      case 10:
        return `The team agreed to keep the ${t()} ${a()} and to ${v()[0]} the ${t()} in ${code()}.`;
      default:
        return `${capitalise(a())} ${t()} ${n()}s ${v()[1]} the ${t()} roughly once a week.`;
    }
  }

  private content(domains: readonly Domain[]): string {
    const r = this.rng;
    const { minContent, maxContent } = this.options;
    const target = r.int(minContent, maxContent);
    const count = r.int(2, 5);
    const paragraphs: string[][] = Array.from({ length: count }, () => [this.sentence(domains)]);
    const length = () => paragraphs.reduce((sum, p) => sum + p.join(' ').length, 0) + (count - 1) * 2;
    for (let i = 0; length() < target; i++) paragraphs[i % count]!.push(this.sentence(domains));
    // Trim to the bounds, never below one sentence a paragraph.
    while (length() > maxContent) {
      const longest = paragraphs.reduce((best, p) => (p.length > best.length ? p : best));
      if (longest.length <= 1) break;
      longest.pop();
    }
    let text = paragraphs.map((p) => p.join(' ')).join('\n\n');
    if (text.length > maxContent) text = `${text.slice(0, maxContent - 1).replace(/\s+\S*$/, '')}.`;
    return text;
  }

  private tags(primary: Domain, secondary: Domain): string[] {
    const r = this.rng;
    const count = r.int(1, 4);
    const pool = [...new Set([...primary.tags, ...primary.tags, ...secondary.tags])];
    const tags = r.sample(pool, count);
    if (tags.length < count) tags.push(...r.sample(TAG_POOL, count - tags.length).filter((t) => !tags.includes(t)));
    const roll = r.next();
    const importance = roll < 0.02 ? IMPORTANCE_TAGS[0] : roll < 0.1 ? IMPORTANCE_TAGS[1] : roll < 0.16 ? IMPORTANCE_TAGS[2] : null;
    if (importance) {
      if (tags.length >= 4) tags[tags.length - 1] = importance;
      else tags.push(importance);
    }
    return tags;
  }

  /**
   * Recall queries as people type them: 1-3 words, some misspelt, some cut
   * short (prefix search), some phrased like a topic.
   */
  queries(count: number): { query: string; kind: 'words' | 'typo' | 'prefix' | 'mixed' }[] {
    const r = this.rng;
    const out: { query: string; kind: 'words' | 'typo' | 'prefix' | 'mixed' }[] = [];
    for (let i = 0; i < count; i++) {
      const domain = r.pick(DOMAINS);
      const words = r.sample(domain.terms, r.int(1, 3));
      const kind = (['words', 'words', 'typo', 'prefix', 'mixed'] as const)[i % 5]!;
      if (kind === 'typo') {
        const j = words.findIndex((w) => w.length >= 5);
        if (j >= 0) words[j] = typo(words[j]!, r);
        else words[0] = typo(r.pick(domain.terms.filter((w) => w.length >= 5)), r);
      } else if (kind === 'prefix') {
        const last = words.length - 1;
        const w = words[last]!;
        if (w.length >= 6) words[last] = w.slice(0, r.int(4, Math.min(6, w.length - 2)));
        else words[last] = r.pick(domain.terms.filter((x) => x.length >= 7)).slice(0, 5);
      } else if (kind === 'mixed') {
        words.splice(0, words.length > 1 ? 1 : 0, r.pick(ADJECTIVES));
      }
      out.push({ query: words.join(' '), kind });
    }
    return out;
  }
}

/** One edit: a swapped, dropped or doubled letter. */
function typo(word: string, r: Random): string {
  const i = r.int(1, word.length - 2);
  switch (r.int(0, 2)) {
    case 0:
      return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
    case 1:
      return word.slice(0, i) + word.slice(i + 1);
    default:
      return word.slice(0, i) + word[i] + word.slice(i);
  }
}
