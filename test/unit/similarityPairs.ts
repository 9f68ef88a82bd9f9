/**
 * Pairs of realistic coding memories for calibrating near-duplicate detection
 * (src/core/similarity.ts): the same lesson in other words, and memories on
 * the same subject that teach something else.
 */
export interface PairMemory {
  topic: string;
  summary: string;
  content: string;
}

export interface MemoryPair {
  name: string;
  existing: PairMemory;
  incoming: PairMemory;
}

/** The same lesson, reworded: a second memory would duplicate the first. */
export const DUPLICATE_PAIRS: readonly MemoryPair[] = [
  {
    name: 'pool exhaustion',
    existing: {
      topic: 'Postgres connection pool exhausted by batch jobs',
      summary: 'A pool of 10 ran dry when nightly batch jobs held connections; raised to 50 with a 60 s idle timeout.',
      content:
        'Symptom: API requests timed out with "remaining connection slots are reserved" during the nightly import.\n\n' +
        'Cause: the batch jobs each held a connection for the whole run and the pool size was 10.\n\n' +
        'Fix: pool size 50 and idle_timeout 60s in config/database.yml; batch jobs now release connections between chunks.',
    },
    incoming: {
      topic: 'Nightly import starves the database connection pool',
      summary: 'Batch jobs kept DB connections open and the 10-connection pool ran out; pool raised to 50, idle timeout 60 seconds.',
      content:
        'During the nightly import the API timed out waiting for a database connection.\n\n' +
        'The import jobs kept their connections open for the entire run, and the pool only had 10.\n\n' +
        'Set the pool to 50 with a 60 second idle timeout (config/database.yml) and made the jobs release the connection after each chunk.',
    },
  },
  {
    name: 'jest open handle',
    existing: {
      topic: 'Jest does not exit: Redis client keeps the event loop alive',
      summary: 'The Redis client created in src/cache.ts is never closed; call client.quit() in a global afterAll.',
      content:
        'npm test printed "Jest did not exit one second after the test run has completed" and CI hung until the timeout.\n' +
        'jest --detectOpenHandles pointed at the Redis client created at import time in src/cache.ts.\n' +
        'Fix: export the client and call `await client.quit()` in afterAll of test/setup.ts.',
    },
    incoming: {
      topic: 'Test runner hangs after the suite: open Redis connection',
      summary: 'Jest kept running after all tests passed because the redis connection from src/cache.ts was left open; quit it in afterAll.',
      content:
        'After every test passed, Jest never exited and the CI job ran into its time limit.\n' +
        'Running with --detectOpenHandles showed the redis connection opened by src/cache.ts when it is imported.\n' +
        'We now close it with client.quit() in the global afterAll (test/setup.ts).',
    },
  },
  {
    name: 'pnpm only',
    existing: {
      topic: 'Use pnpm, not npm, in this repository',
      summary: 'The lockfile is pnpm-lock.yaml; npm install creates package-lock.json and breaks the frozen-lockfile check in CI.',
      content:
        'This monorepo is managed with pnpm workspaces. Running `npm install` writes a package-lock.json next to ' +
        'pnpm-lock.yaml and CI fails on `pnpm install --frozen-lockfile`. Always use `pnpm install` and `pnpm add`.',
    },
    incoming: {
      topic: 'Install dependencies with pnpm only',
      summary: 'npm install adds a package-lock.json beside pnpm-lock.yaml and the CI frozen lockfile step fails; always use pnpm.',
      content:
        'I ran npm install to add a package and CI broke: --frozen-lockfile complained because a package-lock.json ' +
        'appeared next to pnpm-lock.yaml. The workspaces are pnpm workspaces, so use pnpm add / pnpm install, never npm.',
    },
  },
  {
    name: 'docker platform',
    existing: {
      topic: 'Docker images built on Apple Silicon crash in production',
      summary: 'Images built on M1 Macs are arm64 while the cluster runs amd64; build with docker buildx --platform linux/amd64.',
      content:
        'Pods crashed at start with "exec format error" after a deploy from a developer laptop.\n\n' +
        'Images built on Apple Silicon are linux/arm64; the production nodes are amd64.\n\n' +
        'Build with `docker buildx build --platform linux/amd64 -t app .` (scripts/build-image.sh now does).',
    },
    incoming: {
      topic: 'exec format error: build linux/amd64 images on ARM Macs',
      summary: 'Containers built locally on an M2 Mac fail on the amd64 nodes; pass --platform linux/amd64 to docker buildx build.',
      content:
        'A deploy of an image built on my M2 MacBook failed: every pod logged exec format error.\n' +
        'The laptop builds arm64 images but production is amd64. scripts/build-image.sh now runs docker buildx build --platform linux/amd64.',
    },
  },
  {
    name: 'playwright redirect',
    existing: {
      topic: 'Flaky e2e login test: wait for the OAuth redirect',
      summary: 'The Playwright login test clicked the dashboard link before the OAuth redirect finished; await page.waitForURL first.',
      content:
        'tests/e2e/login.spec.ts failed about one run in five with "element is not attached to the DOM".\n' +
        'The test clicked on the dashboard while the OAuth callback was still redirecting.\n' +
        "Fix: `await page.waitForURL('**/dashboard')` right after submitting the login form.",
    },
    incoming: {
      topic: 'Playwright sign-in spec fails intermittently',
      summary: 'The sign in e2e spec raced the OAuth callback redirect; awaiting page.waitForURL for the dashboard fixed it.',
      content:
        'login.spec.ts was flaky on CI: sometimes the element was detached when clicked.\n' +
        'Cause: the test interacted with the page before the redirect from the OAuth callback completed.\n' +
        'It now awaits page.waitForURL for **/dashboard after the form submit.',
    },
  },
  {
    name: 'invoice timezone',
    existing: {
      topic: 'Invoice due dates off by one day for US customers',
      summary: "new Date('2024-03-01') parses as UTC midnight; parse with date-fns parseISO and convert in the customer's time zone.",
      content:
        'US customers saw invoices due one day early. src/billing/dueDate.ts built dates with new Date(dateString), ' +
        'which treats a date-only string as UTC. Fix: parseISO from date-fns plus zonedTimeToUtc with customer.timezone.',
    },
    incoming: {
      topic: 'Due date shown a day early on invoices (time zones)',
      summary: 'Date-only strings given to new Date() are UTC, so US invoices were due a day early; use parseISO and zonedTimeToUtc.',
      content:
        'Bug report: invoice due dates one day too early for customers in America. In src/billing/dueDate.ts, ' +
        'new Date() on "2024-03-01" gives UTC midnight. Now parsed with date-fns parseISO and converted with zonedTimeToUtc using the customer timezone.',
    },
  },
  {
    name: 'github rate limit',
    existing: {
      topic: 'GitHub API rate limit: retry 429 after Retry-After',
      summary: 'The repository sync job now sleeps for the Retry-After header when GitHub answers 429 and retries up to 3 times.',
      content:
        'The sync worker (src/sync/github.ts) crashed on HTTP 429 from the GitHub API during large backfills.\n' +
        'It now reads the Retry-After header, waits that many seconds and retries, at most 3 times, then fails the job.',
    },
    incoming: {
      topic: 'Respect Retry-After when GitHub throttles the sync worker',
      summary: 'GitHub returns 429 when we sync too fast; wait the Retry-After seconds and retry (max 3 attempts).',
      content:
        'Backfilling many repositories made src/sync/github.ts fail with status 429 Too Many Requests.\n' +
        'Fix: honour the Retry-After response header (sleep that many seconds) and retry the request up to three times.',
    },
  },
  {
    name: 'expand contract migrations',
    existing: {
      topic: 'Database migrations must stay backward compatible',
      summary: 'Migrations run while old pods still serve traffic: never drop or rename a column in the release that stops using it.',
      content:
        'A deploy renamed users.name to users.full_name and the old pods, still running during the rollout, failed every request.\n' +
        'Rule: expand then contract. Release 1 adds the new column and writes both; release 2 drops the old column.',
    },
    incoming: {
      topic: 'Expand/contract for column renames and drops',
      summary: 'Old pods keep running while the migration runs during a rollout, so a rename or drop must be split over two releases.',
      content:
        'Renaming a column in one release broke the pods of the previous version that were still serving during the rollout.\n' +
        'Do it in two releases: first add the new column and write to both (expand), then remove the old column later (contract).',
    },
  },
  {
    name: 'webpack alias',
    existing: {
      topic: 'Imports with @/ fail in Jest but work in webpack',
      summary: 'The @/ alias is configured in webpack and tsconfig paths but not in Jest; add moduleNameMapper for ^@/(.*)$.',
      content:
        'Tests failed with "Cannot find module \'@/utils/format\'" although the app built fine.\n' +
        'webpack.config.js and tsconfig.json map @/ to src/, Jest does not read either.\n' +
        "Fix in jest.config.js: moduleNameMapper: { '^@/(.*)$': '<rootDir>/src/$1' }.",
    },
    incoming: {
      topic: 'Jest cannot resolve the @/ path alias',
      summary: "Cannot find module '@/...' in tests: Jest ignores tsconfig paths, so map ^@/(.*)$ to <rootDir>/src/$1 in moduleNameMapper.",
      content:
        'Only under Jest, imports like @/utils/format could not be found; the webpack build was fine.\n' +
        'The alias exists in tsconfig.json paths and webpack resolve.alias, which Jest does not use. Added a moduleNameMapper entry to jest.config.js.',
    },
  },
  {
    name: 'env var in vite',
    existing: {
      topic: 'Vite only exposes env variables prefixed with VITE_',
      summary: 'import.meta.env.API_URL was undefined in the browser; rename it VITE_API_URL in .env.',
      content:
        'The frontend called "undefined/users" after moving from create-react-app to Vite.\n' +
        'Vite exposes only variables starting with VITE_ to client code. Renamed API_URL to VITE_API_URL in .env and .env.production.',
    },
    incoming: {
      topic: 'import.meta.env variable undefined after the Vite migration',
      summary: 'Client code sees only VITE_-prefixed env variables, so API_URL must be VITE_API_URL.',
      content:
        'After switching the frontend build to Vite, requests went to undefined/users: import.meta.env.API_URL was undefined.\n' +
        'Vite only passes variables with the VITE_ prefix to the browser bundle; the .env files now define VITE_API_URL.',
    },
  },
];

/** Memories on the same subject as another that teach something else: both are worth keeping. */
export const RELATED_PAIRS: readonly MemoryPair[] = [
  {
    name: 'postgres pool vs missing index',
    existing: DUPLICATE_PAIRS[0]!.existing,
    incoming: {
      topic: 'Slow Postgres queries on the orders table: missing index',
      summary: 'The orders list endpoint took 4 s because of a sequential scan on orders.customer_id; added an index concurrently.',
      content:
        'GET /orders took about 4 seconds for large customers. EXPLAIN ANALYZE showed a Seq Scan on orders filtered by customer_id.\n' +
        'Added CREATE INDEX CONCURRENTLY orders_customer_id_idx ON orders (customer_id) in a migration; the endpoint now answers in 40 ms.',
    },
  },
  {
    name: 'jest open handle vs snapshot locale',
    existing: DUPLICATE_PAIRS[1]!.existing,
    incoming: {
      topic: 'Jest snapshots differ on CI: locale and time zone',
      summary: 'Dates in snapshots were formatted with the runner locale; tests now run with TZ=UTC and a fixed en-US locale.',
      content:
        'Snapshot tests passed locally and failed on CI because toLocaleDateString used the machine locale and time zone.\n' +
        'test/setup.ts sets process.env.TZ = "UTC" and the formatter is given "en-US" explicitly.',
    },
  },
  {
    name: 'pnpm only vs hoisting',
    existing: DUPLICATE_PAIRS[2]!.existing,
    incoming: {
      topic: 'pnpm workspaces: two copies of @types/react break the build',
      summary: 'Packages resolved different @types/react versions; pinned one with pnpm overrides in the root package.json.',
      content:
        'tsc reported "JSX element type cannot be used" in packages/ui because two versions of @types/react were installed.\n' +
        'Added "pnpm": { "overrides": { "@types/react": "18.2.0" } } to the root package.json and ran pnpm install.',
    },
  },
  {
    name: 'docker platform vs layer cache',
    existing: DUPLICATE_PAIRS[3]!.existing,
    incoming: {
      topic: 'Docker build reinstalls dependencies on every change',
      summary: 'COPY . . before npm ci invalidated the layer cache; copy package.json and the lockfile first, install, then copy the source.',
      content:
        'Every docker build took 6 minutes because any source change invalidated the npm ci layer.\n' +
        'The Dockerfile now copies package.json and package-lock.json, runs npm ci, and only then copies the rest of the source.',
    },
  },
  {
    name: 'playwright redirect vs storage state',
    existing: DUPLICATE_PAIRS[4]!.existing,
    incoming: {
      topic: 'Playwright tests interfere through a shared login state',
      summary: 'Parallel workers shared one storageState file and logged each other out; each worker now gets its own account.',
      content:
        'With 4 workers, e2e tests failed at random with a logged-out page. All workers reused auth.json, and one test logs out.\n' +
        'global-setup.ts now creates one account and one storage state file per worker (auth-<workerIndex>.json).',
    },
  },
  {
    name: 'invoice timezone vs invoice pdf',
    existing: DUPLICATE_PAIRS[5]!.existing,
    incoming: {
      topic: 'Invoice PDF generation blocks the request for seconds',
      summary: 'Rendering invoice PDFs with Puppeteer in the request took 3 s; they are now rendered by a background job and cached in S3.',
      content:
        'POST /invoices answered in about 3 seconds because src/billing/pdf.ts launched Puppeteer to render the PDF.\n' +
        'The PDF is now rendered by a queue worker after the invoice is saved and stored in S3; the API returns at once.',
    },
  },
  {
    name: 'github rate limit vs webhook signature',
    existing: DUPLICATE_PAIRS[6]!.existing,
    incoming: {
      topic: 'GitHub webhook signature never matches',
      summary: 'The body was parsed as JSON before the HMAC check; compute sha256 over the raw request body with the webhook secret.',
      content:
        'Every GitHub webhook was rejected with "signature mismatch". express.json() had already parsed the body, so the HMAC ' +
        'was computed over re-serialised JSON. src/webhooks/github.ts now uses express.raw() and compares X-Hub-Signature-256 with timingSafeEqual.',
    },
  },
  {
    name: 'expand contract vs lock timeout',
    existing: DUPLICATE_PAIRS[7]!.existing,
    incoming: {
      topic: 'Migration adding a column locked the users table',
      summary: 'ALTER TABLE with a volatile default rewrote and locked users for minutes; add the column without a default and backfill in batches.',
      content:
        'A migration adding users.last_seen_at DEFAULT now() held an ACCESS EXCLUSIVE lock while it rewrote the table, and logins timed out.\n' +
        'Migrations now set lock_timeout = 5s, add the column without a default, and backfill in batches of 10,000 rows.',
    },
  },
  {
    name: 'jest alias vs ts-jest slowness',
    existing: DUPLICATE_PAIRS[8]!.existing,
    incoming: {
      topic: 'Jest with ts-jest is slow: type checking every file',
      summary: 'ts-jest type-checked each test file and the suite took 4 minutes; switched the transform to @swc/jest and run tsc separately.',
      content:
        'The Jest suite took 4 minutes, most of it in ts-jest compiling and type-checking each test file.\n' +
        'jest.config.js now transforms with @swc/jest; type errors are caught by tsc --noEmit in its own CI step.',
    },
  },
  {
    name: 'vite env vs vite proxy',
    existing: DUPLICATE_PAIRS[9]!.existing,
    incoming: {
      topic: 'CORS errors in development: use the Vite dev server proxy',
      summary: 'The browser blocked calls to the API on another port; vite.config.ts proxies /api to localhost:8080 in development.',
      content:
        'In development the frontend on port 5173 called the API on 8080 and the browser refused with a CORS error.\n' +
        'server.proxy in vite.config.ts forwards /api to http://localhost:8080, so the client calls relative URLs.',
    },
  },
];

/** Memories about other things, so that word rarity is as in a real store. */
export const BACKGROUND: readonly PairMemory[] = [
  { topic: 'Release checklist', summary: 'Tag, changelog, npm publish from CI only.', content: 'Bump the version, update CHANGELOG.md, push the tag; the release workflow publishes to npm.' },
  { topic: 'Feature flags live in LaunchDarkly', summary: 'Flags are read through src/flags.ts, never directly.', content: 'Wrap every flag read in src/flags.ts so tests can override them with setFlag().' },
  { topic: 'Logging: use the structured logger', summary: 'console.log is stripped in production builds; use logger.info with fields.', content: 'src/log.ts exports a pino logger. Pass objects, not strings, so Datadog can index fields.' },
  { topic: 'Python service uses Poetry', summary: 'Dependencies of services/ml are managed with Poetry, not pip.', content: 'Run poetry install in services/ml; requirements.txt is generated for the Docker image by poetry export.' },
  { topic: 'Kubernetes memory limits for the worker', summary: 'The worker was OOMKilled at 512Mi; limit raised to 1Gi and concurrency lowered to 4.', content: 'kubectl describe pod showed OOMKilled. values.yaml: resources.limits.memory 1Gi, WORKER_CONCURRENCY=4.' },
  { topic: 'Git hooks with husky', summary: 'Pre-commit runs lint-staged; skip with HUSKY=0 only in emergencies.', content: 'husky installs .husky/pre-commit which runs lint-staged on the staged files (eslint --fix, prettier).' },
  { topic: 'Stripe webhooks in local development', summary: 'Use stripe listen --forward-to localhost:3000/webhooks/stripe.', content: 'The Stripe CLI forwards events and prints the signing secret to put in STRIPE_WEBHOOK_SECRET.' },
  { topic: 'React Query cache keys', summary: 'Keys are arrays starting with the resource name; invalidate by prefix.', content: "useQuery(['orders', customerId]) and queryClient.invalidateQueries(['orders']) after a mutation." },
];
