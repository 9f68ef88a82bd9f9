/**
 * Tags suggested from a memory's text when it is stored with `auto_tag`.
 * Whole words only ("Good" is not `go`, "rapid" is not `api`), in a stable
 * order: most mentioned first, then alphabetical.
 */

const VOCABULARY: Record<string, string> = {
  // languages
  python: 'python', py: 'python', typescript: 'typescript', ts: 'typescript', tsx: 'typescript',
  javascript: 'javascript', js: 'javascript', jsx: 'javascript', node: 'node', nodejs: 'node', deno: 'deno',
  rust: 'rust', rs: 'rust', golang: 'go', java: 'java', kotlin: 'kotlin', swift: 'swift', ruby: 'ruby',
  php: 'php', csharp: 'csharp', 'c#': 'csharp', cpp: 'cpp', 'c++': 'cpp', bash: 'shell', shell: 'shell',
  sh: 'shell', powershell: 'powershell', sql: 'sql', html: 'html', css: 'css', yaml: 'yaml', json: 'json',
  // tools and platforms
  docker: 'docker', kubernetes: 'kubernetes', k8s: 'kubernetes', git: 'git', github: 'github', npm: 'npm',
  pnpm: 'npm', yarn: 'npm', webpack: 'webpack', esbuild: 'esbuild', vite: 'vite', react: 'react',
  vue: 'vue', angular: 'angular', svelte: 'svelte', django: 'django', flask: 'flask', fastapi: 'fastapi',
  express: 'express', postgres: 'postgres', postgresql: 'postgres', mysql: 'mysql', sqlite: 'sqlite',
  redis: 'redis', mongodb: 'mongodb', kafka: 'kafka', aws: 'aws', gcp: 'gcp', azure: 'azure',
  terraform: 'terraform', vscode: 'vscode', mcp: 'mcp', graphql: 'graphql', grpc: 'grpc',
  // kinds of knowledge
  bug: 'debugging', debug: 'debugging', debugging: 'debugging', crash: 'debugging', error: 'debugging',
  test: 'testing', tests: 'testing', testing: 'testing', flaky: 'testing', performance: 'performance',
  slow: 'performance', latency: 'performance', security: 'security', auth: 'security',
  authentication: 'security', config: 'config', configuration: 'config', deploy: 'deployment',
  deployment: 'deployment', ci: 'ci', migration: 'migration', convention: 'conventions',
  conventions: 'conventions', api: 'api', database: 'database', db: 'database', network: 'networking',
  networking: 'networking', dns: 'networking', http: 'http', timeout: 'timeouts', timeouts: 'timeouts',
};

export function suggestTags(text: string, max = 5): string[] {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[a-z0-9+#]+/g) ?? []) {
    const tag = Object.hasOwn(VOCABULARY, word) ? VOCABULARY[word] : undefined;
    if (tag) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, max)
    .map(([tag]) => tag);
}
