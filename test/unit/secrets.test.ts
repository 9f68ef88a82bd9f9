import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { describeRedactions, redactSecrets, SECRET_KINDS, shannonEntropy } from '../../src/core/secrets';

// Every fake secret here is built at run time from pieces (a prefix split in
// two, a pseudo-random body), so that this file holds nothing a secret scanner
// would flag.

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';
const B64 = ALNUM + '+/';
const URLSAFE = ALNUM + '-_';

/** A deterministic pseudo-random string over `alphabet`, different for each call. */
let seed = 20240611;
function rand(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    out += alphabet[Math.floor((seed / 2147483648) * alphabet.length)];
  }
  return out;
}
const alnum = (n: number): string => rand(ALNUM, n);
const hex = (n: number): string => rand(HEX, n);
const uuid = (): string => [hex(8), hex(4), hex(4), hex(4), hex(12)].join('-');

function kindsOf(text: string): Map<string, number> {
  return new Map(redactSecrets(text).redactions.map((r) => [r.kind, r.count]));
}

interface Positive {
  kind: string;
  what: string;
  text: string;
  /** The secret: it must be gone from the output. */
  secret: string;
  /** The whole expected output, when the secret is too short to search for. */
  expected?: string;
}

const positives: Positive[] = [];
function positive(kind: string, what: string, text: string, secret: string, expected?: string): void {
  positives.push({ kind, what, text, secret, expected });
}

// --- private keys
{
  const body = rand(B64, 64) + '\n' + rand(B64, 64);
  positive('private key', 'a PEM RSA key', `-----BEGIN ${'RSA PRIVATE'} KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`, body);
  const gcp = rand(B64, 80);
  positive(
    'private key',
    'a GCP service-account JSON private_key',
    `{"type": "service_account", "private_key": "-----BEGIN ${'PRIVATE'} KEY-----\\n${gcp}\\n-----END PRIVATE KEY-----\\n",` +
      ' "client_email": "x@y.iam.gserviceaccount.com"}',
    gcp,
  );
  const pgp = rand(B64, 60);
  const pgpBlock = `-----BEGIN PGP ${'PRIVATE'} KEY BLOCK-----\n\n${pgp}\n-----END PGP PRIVATE KEY BLOCK-----`;
  positive('private key', 'a PGP private key block', pgpBlock, pgp);
  const cut = rand(B64, 60);
  positive('private key', 'a key cut off before its END line', `key:\n-----BEGIN OPENSSH ${'PRIVATE'} KEY-----\n${cut}`, cut);
  const cut2 = rand(B64, 64) + '\n' + rand(B64, 20) + '==';
  positive(
    'private key',
    'a cut-off key, up to the prose after it',
    `-----BEGIN ${'EC PRIVATE'} KEY-----\nProc-Type: 4,ENCRYPTED\n\n${cut2}\n\nNext, restart the agent.`,
    cut2,
    '[REDACTED private key]\n\nNext, restart the agent.',
  );
}

// --- secrets that are URLs
{
  const path = `T${rand(UPPER + DIGITS, 8)}/B${rand(UPPER + DIGITS, 8)}/${alnum(24)}`;
  positive('Slack webhook URL', 'an incoming webhook', `curl -X POST https://hooks.${'slack'}.com/services/${path} -d @msg.json`, path);
  positive('Slack webhook URL', 'the short form from the docs', `https://hooks.${'slack'}.com/services/T000/B000/XXXX`, 'T000/B000/XXXX');
  const wf = `${alnum(11)}/${alnum(11)}/${DIGITS}/${hex(32)}`;
  positive('Slack webhook URL', 'a workflow webhook', `Trigger: hooks.${'slack'}.com/workflows/${wf}`, wf);
  const dw = `${rand(DIGITS, 18)}/${rand(URLSAFE, 68)}`;
  positive('Discord webhook URL', 'a Discord webhook', `DISCORD_URL=https://discord.com/api/${'webhooks'}/${dw}`, dw);
}

// --- provider tokens
{
  const t = (kind: string, what: string, secret: string, around = (s: string): string => `use ${s} here`): void =>
    positive(kind, what, around(secret), secret);
  t('Anthropic API key', 'an API key', 'sk-' + 'ant-api03-' + rand(URLSAFE, 93) + 'AA');
  t('OpenAI API key', 'a project key', 'sk-' + 'proj-' + rand(URLSAFE, 120));
  t('OpenAI API key', 'a legacy key', 'sk-' + alnum(48));
  t('GitHub token', 'a classic PAT', 'gh' + 'p_' + alnum(36));
  t('GitHub token', 'a fine-grained PAT', 'github' + '_pat_' + rand(ALNUM + '_', 82));
  t('GitHub token', 'an Actions token', 'gh' + 's_' + alnum(36));
  t('GitLab token', 'a PAT', 'gl' + 'pat-' + rand(URLSAFE, 20));
  t('GitLab token', 'a runner token', 'gl' + 'rt-' + rand(URLSAFE, 20));
  t('AWS access key', 'an access key ID', 'AK' + 'IA' + rand(UPPER + DIGITS, 16));
  t('AWS access key', 'a temporary access key ID', 'AS' + 'IA' + rand(UPPER + DIGITS, 16));
  t('Google API key', 'an API key', 'AI' + 'za' + rand(URLSAFE, 35));
  t('Google OAuth client secret', 'a client secret', 'GOCSPX' + '-' + rand(URLSAFE, 28));
  t('Google OAuth token', 'an access token', 'ya' + '29.' + rand(URLSAFE, 120));
  t('Slack token', 'a bot token', 'xo' + 'xb-' + rand(DIGITS, 12) + '-' + rand(DIGITS, 13) + '-' + alnum(24));
  t('Slack token', 'an app-level token', 'xa' + 'pp-1-' + 'A' + rand(UPPER + DIGITS, 10) + '-' + rand(DIGITS, 13) + '-' + hex(64));
  t('Slack token', 'a configuration token', 'xo' + 'xe.xoxp-1-' + alnum(150));
  t('Slack token', 'a configuration refresh token', 'xo' + 'xe-1-' + alnum(140));
  t('Stripe key', 'a live secret key', 'sk' + '_live_' + alnum(99));
  t('Stripe key', 'a test secret key (still a secret)', 'sk' + '_test_' + alnum(99));
  t('Stripe key', 'a restricted test key', 'rk' + '_test_' + alnum(99));
  t('Stripe key', 'a webhook signing secret', 'wh' + 'sec_' + alnum(32));
  t('npm token', 'an access token', 'np' + 'm_' + alnum(36));
  t('PyPI token', 'an upload token', 'py' + 'pi-AgEIcHlwaS5vcmc' + rand(URLSAFE, 150));
  t('Hugging Face token', 'a user access token', 'h' + 'f_' + rand(UPPER + LOWER, 34));
  t('Databricks token', 'a PAT', 'da' + 'pi' + hex(32));
  t('DigitalOcean token', 'a PAT', 'do' + 'p_v1_' + hex(64));
  t('Shopify token', 'an admin API access token', 'sh' + 'pat_' + hex(32));
  t('Shopify token', 'a shared secret', 'sh' + 'pss_' + hex(32));
  t('SendGrid API key', 'an API key', 'S' + 'G.' + rand(URLSAFE, 22) + '.' + rand(URLSAFE, 43));
  t('Twilio API key', 'an API key SID', 'S' + 'K' + hex(32));
  t('Mailgun API key', 'a private API key', 'ke' + 'y-' + hex(32));
  t('Heroku API key', 'a new-style key', 'HR' + 'KU-AA' + rand(URLSAFE, 58));
  t('Heroku API key', 'a UUID key after HEROKU_API_KEY', uuid(), (s) => `export HEROKU_API_KEY=${s}`);
  t('Heroku API key', 'a UUID key mentioned with heroku', uuid(), (s) => `The heroku token for CI is ${s}.`);
  t('Telegram bot token', 'a bot token in an API URL', rand(DIGITS, 10) + ':AA' + rand(URLSAFE, 33), (s) => `https://api.telegram.org/bot${s}/getMe`);
  t('Telegram bot token', 'a bot token in the environment', '1' + rand(DIGITS, 8) + ':AA' + rand(URLSAFE, 33), (s) => `TELEGRAM=${s}`);
  t('Discord bot token', 'a bot token', 'M' + 'T' + alnum(24) + '.' + rand(URLSAFE, 6) + '.' + rand(URLSAFE, 38));
  t('Atlassian API token', 'a Jira API token', 'ATA' + 'TT3' + rand(URLSAFE, 180));
  t('HashiCorp Vault token', 'a service token', 'hv' + 's.' + rand(URLSAFE, 90));
  t('Postman API key', 'an API key', 'PM' + 'AK-' + hex(24) + '-' + hex(34));
  t('New Relic key', 'a user API key', 'NR' + 'AK-' + rand(UPPER + DIGITS, 27));
  t('Grafana token', 'a service-account token', 'gl' + 'sa_' + alnum(32) + '_' + hex(8));
  t('Grafana token', 'a cloud token', 'gl' + 'c_' + rand(B64, 120));
  t('Sentry token', 'an org auth token', 'sn' + 'trys_' + rand(B64, 120));
  t('Linear API key', 'an API key', 'li' + 'n_api_' + alnum(40));
  t('JSON web token', 'a signed JWT', 'ey' + 'J' + rand(URLSAFE, 30) + '.ey' + 'J' + rand(URLSAFE, 60) + '.' + rand(URLSAFE, 43));
}

// --- secrets recognised by their key or their place
{
  const aws = rand(B64, 40);
  positive('AWS secret key', 'aws_secret_access_key in ~/.aws/credentials', `[default]\naws_${'secret'}_access_key = ${aws}\n`, aws);
  const aws2 = rand(B64, 40);
  positive('AWS secret key', 'SecretAccessKey in CLI JSON output', `{"AccessKey": {"Secret${'AccessKey'}": "${aws2}"}}`, aws2);
  const azure = rand(B64, 86) + '==';
  positive(
    'Azure connection-string key',
    'a storage connection string',
    `DefaultEndpointsProtocol=https;AccountName=myacct;Account${'Key'}=${azure};EndpointSuffix=core.windows.net`,
    azure,
  );
  const sb = rand(B64, 43) + '=';
  const serviceBus = `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccess${'Key'}=${sb}`;
  positive('Azure connection-string key', 'a Service Bus connection string', serviceBus, sb);
  const sig = rand(ALNUM, 40) + '%3D';
  positive('Azure SAS signature', 'a SAS URL', `https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&si${'g'}=${sig}`, sig);

  positive(
    'password in a URL',
    'a short password in a connection string',
    'postgres://app:pw@db.internal:5432/app',
    'pw',
    'postgres://app:[REDACTED password in a URL]@db.internal:5432/app',
  );
  const redis = alnum(16);
  positive('password in a URL', 'a Redis URL with no user', `REDIS_URL=redis://:${redis}@cache:6379/0`, redis);
  positive(
    'password in a URL',
    'a dictionary word',
    'https://admin:letmein@intranet/',
    '',
    'https://admin:[REDACTED password in a URL]@intranet/',
  );
  positive(
    'password in a URL',
    'a password in a query string (ends at &)',
    'jdbc:mysql://db/app?user=app&password=s3cr&ssl=true',
    's3cr',
    'jdbc:mysql://db/app?user=app&password=[REDACTED password in a URL]&ssl=true',
  );

  const bearer = rand(URLSAFE + '.~', 40);
  positive('authorization header', 'Authorization: Bearer <opaque>', `curl -H "Authorization: ${'Bearer'} ${bearer}" https://x.io`, bearer);
  const basic = Buffer.from(`admin:${alnum(10)}`).toString('base64');
  positive('authorization header', 'Authorization: Basic <base64>', `Authorization: ${'Basic'} ${basic}`, basic);
  const tok = hex(40);
  positive('authorization header', '-H "Authorization: token …"', `curl -H 'Authorization: ${'token'} ${tok}' https://x.io/user`, tok);
  const json = alnum(32);
  positive('authorization header', 'a header in JSON', `{"headers": {"Authorization": "${'Bearer'} ${json}"}}`, json);
  const loose = rand(URLSAFE, 20) + '3';
  positive('bearer token', 'a Bearer token without the header name', `send it as ${'Bearer'} ${loose} on every call`, loose);
  const curlPw = alnum(6);
  positive('password on a command line', 'curl -u user:password', `curl -u admin:${curlPw} https://jenkins.local/api/json`, curlPw);
  const sshpass = alnum(9);
  positive('password on a command line', 'sshpass -p', `sshpass -p '${sshpass}' ssh deploy@host`, sshpass);
  const mysql = alnum(9);
  positive('password on a command line', 'mysql -p<password>', `mysql -u root -p${mysql} app < dump.sql`, mysql);
  const redisCli = alnum(9);
  positive('password on a command line', 'redis-cli -a', `redis-cli -h cache -a ${redisCli} ping`, redisCli);

  const cases: Array<[string, string, string]> = [
    ['password=hunter2', 'password=[REDACTED assigned secret]', 'a short password=value'],
    ['passwd: abc123', 'passwd: [REDACTED assigned secret]', 'a short passwd: value'],
    ['pwd="p4ss"', 'pwd="[REDACTED assigned secret]"', 'a short quoted pwd'],
    ['DB_PASS=7', 'DB_PASS=[REDACTED assigned secret]', 'a one-character password'],
    ['mysqlPassword: "Tr0ub4dor&3"', 'mysqlPassword: "[REDACTED assigned secret]"', 'a camelCase key'],
    ['spring.datasource.password=s3cr3t', 'spring.datasource.password=[REDACTED assigned secret]', 'a dotted properties key'],
    ['"password": "correct horse battery staple"', '"password": "[REDACTED assigned secret]"', 'a quoted passphrase with spaces'],
    ['**Password:** hunter2', '**Password:** [REDACTED assigned secret]', 'a Markdown bold key'],
    ['Server=db;User Id=sa;Password=p4ss;', 'Server=db;User Id=sa;Password=[REDACTED assigned secret];', 'an ADO.NET connection string'],
    ['password=${DB_PASSWORD:-hunter2}', 'password=[REDACTED assigned secret]', 'a shell default (the default is a secret)'],
    ['String password = "letmein";', 'String password = "[REDACTED assigned secret]";', 'a hard-coded password in code'],
    ["load_cert_chain(cert, password=b'badpass')", "load_cert_chain(cert, password=b'[REDACTED assigned secret]')", 'a Python bytes literal'],
    ['mysql --password hunter2 -h db', 'mysql --password [REDACTED assigned secret] -h db', 'a --password flag'],
    ['docker run -e POSTGRES_PASSWORD=secret postgres', 'docker run -e POSTGRES_PASSWORD=[REDACTED assigned secret] postgres', 'an env-style literal'],
    ['"password": "password"', '"password": "[REDACTED assigned secret]"', 'a quoted literal, even a dummy one'],
    ['<server><password>s3cr3t</password></server>', '<server><password>[REDACTED assigned secret]</password></server>', 'an XML element'],
    ['machine api.example.com login me\n  password hunter2', 'machine api.example.com login me\n  password [REDACTED assigned secret]', 'a .netrc entry'],
  ];
  for (const [text, expected, what] of cases) positive('assigned secret', what, text, '', expected);
  const cs = alnum(24);
  positive('assigned secret', '"client_secret": "…"', `{"client_id": "abc", "client_${'secret'}": "${cs}"}`, cs);
  const ak = alnum(12);
  positive('assigned secret', 'api-key: … as a header', `api-${'key'}: ${ak}`, ak);

  const g1 = alnum(32);
  positive('generic secret', 'MY_SERVICE_TOKEN=<random>', `export MY_SERVICE_${'TOKEN'}=${g1}`, g1);
  const g2 = rand(B64, 44);
  positive('generic secret', '"serviceKey": "<base64>"', `{"service${'Key'}": "${g2}"}`, g2);
  const g3 = rand(UPPER + LOWER, 24);
  positive('generic secret', 'a letters-only random token', `x-service-${'token'}: ${g3}`, g3);
  const g4 = uuid();
  positive('generic secret', 'a UUID given to a key', `SESSION_${'TOKEN'}=${g4}`, g4);
  const g5 = hex(40);
  positive('generic secret', 'a hex token in YAML', `  webhook_${'secret_value'}: ${g5}`, g5);
}

describe('redactSecrets: what is redacted', () => {
  for (const p of positives) {
    it(`${p.kind}: ${p.what}`, () => {
      const result = redactSecrets(p.text);
      if (p.expected !== undefined) assert.equal(result.text, p.expected);
      if (p.secret !== '') assert.ok(!result.text.includes(p.secret), `the secret is still there: ${result.text}`);
      assert.ok(result.text.includes(`[REDACTED ${p.kind}]`), result.text);
      const reported = result.redactions.find((r) => r.kind === p.kind);
      assert.ok(reported && reported.count >= 1, JSON.stringify(result.redactions));
    });
  }

  it('has a positive example for every kind it can report', () => {
    const covered = new Set(positives.map((p) => p.kind));
    assert.deepEqual(
      SECRET_KINDS.filter((k) => !covered.has(k)),
      [],
    );
  });

  it('keeps the key and the quotes, and redacts only the value', () => {
    const key = alnum(40);
    assert.equal(redactSecrets(`API_${'KEY'}="${key}" # prod`).text, 'API_KEY="[REDACTED assigned secret]" # prod');
    assert.equal(redactSecrets('password=hunter2.').text, 'password=[REDACTED assigned secret].');
  });

  it('labels a known token by its provider, even when it is also assigned to a key', () => {
    const anthropic = 'sk-' + 'ant-api03-' + rand(URLSAFE, 60);
    const github = 'gh' + 'p_' + alnum(36);
    const result = redactSecrets(`ANTHROPIC_API_${'KEY'}=${anthropic}\nGITHUB_${'TOKEN'}=${github}\nAuthorization: Bearer ${github}`);
    assert.deepEqual(result.redactions, [
      { kind: 'Anthropic API key', count: 1 },
      { kind: 'GitHub token', count: 2 },
    ]);
    assert.equal(
      result.text,
      'ANTHROPIC_API_KEY=[REDACTED Anthropic API key]\nGITHUB_TOKEN=[REDACTED GitHub token]\nAuthorization: Bearer [REDACTED GitHub token]',
    );
  });

  it('counts each secret', () => {
    const kinds = kindsOf(`password=a1\npassword=b2\nDB_PASSWORD=c3 and ${'gh' + 'p_' + alnum(36)}`);
    assert.equal(kinds.get('assigned secret'), 3);
    assert.equal(kinds.get('GitHub token'), 1);
  });

  it('does not trust text that only looks like a marker', () => {
    const result = redactSecrets('[REDACTED password=hunter2]');
    assert.ok(!result.text.includes('hunter2'), result.text);
    assert.equal(kindsOf('[REDACTED foo] password=hunter2').get('assigned secret'), 1);
  });

  it('never looks inside a marker, and never lets a match run across one', () => {
    const text = 'password=[REDACTED GitHub token] and heroku [REDACTED Heroku API key] token: [REDACTED generic secret]';
    assert.deepEqual(redactSecrets(text), { text, redactions: [] });
    // tags are lower-cased after redaction: a lower-case marker is still a marker
    const lower = 'tags: password=[redacted assigned secret], [redacted aws access key]';
    assert.deepEqual(redactSecrets(lower), { text: lower, redactions: [] });
    // the value stops at the marker: what is before it is still judged on its own
    assert.equal(redactSecrets('password=abc[REDACTED GitHub token]').text, 'password=[REDACTED assigned secret][REDACTED GitHub token]');
  });
});

/**
 * Text that must come out unchanged. Decisions on false positives:
 * - prose about passwords (no assignment, or a common word after "password:") is not a secret;
 * - `password: ${PASSWORD}`, `$PASSWORD`, `{{ … }}`, `<your-password>`, `****` and YAML `!secret` are
 *   references or placeholders, not secrets (but `${VAR:-default}` is: the default is a literal);
 * - unquoted code after a password key (a type, a call, a member path, `None`, a snake_case or
 *   secret-named variable: `password=password`) is code, not a secret; but a quoted value, or an
 *   unquoted one in `ENV_STYLE=value`, is a literal and is redacted even if it is a dummy
 *   (`"password": "password"`, `POSTGRES_PASSWORD=secret`);
 * - in a URL, `user:password@` and `user:${PASS}@` are spared; any other password, however short, is not;
 * - a generic key (token/key/auth…) only hides a value that looks generated: 10+ characters,
 *   Shannon entropy of at least 3 bits a character, not words (`user_42_profile`), not a path.
 */
const negatives: Array<[string, string]> = [
  ['prose about passwords', 'The password is rotated weekly; ask ops for the new password.'],
  ['prose with a colon', 'Password: see the team 1Password vault.'],
  ['prose with a colon and a verb', 'Forgot your password: click "reset" on the login page.'],
  ['a heading', '## Password policy\nPasswords must be at least 12 characters.'],
  ['an empty value', 'password: \nuser: admin'],
  ['an empty quoted value', 'password: ""'],
  ['a nested YAML mapping', 'db:\n  password:\n    from_env: DB_PASSWORD'],
  ['an env placeholder', 'password: ${PASSWORD}'],
  ['a quoted env placeholder', 'password: "${PASSWORD}"'],
  ['a shell variable', 'PGPASSWORD=$DB_PASSWORD psql -h db'],
  ['a GitHub Actions expression', 'password: ${{ secrets.DB_PASSWORD }}'],
  ['a template', 'password: "{{ vault_db_password }}"'],
  ['an angle-bracket placeholder', 'password: <your-password>'],
  ['a mask', 'password: "********"'],
  ['a mask of bullets', 'password: \u2022\u2022\u2022\u2022\u2022\u2022'],
  ['a YAML tag', 'password: !secret wifi_password'],
  ['a placeholder in a URL', 'postgres://app:${DB_PASSWORD}@db:5432/app'],
  ['a word standing for the password in a URL', "new Redis('redis://user:pass@localhost:6379'); // or user:password@host"],
  ['a label ending in a colon', "console.log('password:', password);"],
  ['a JS object from a request', 'const password = req.body.password;'],
  ['a comparison', 'if (password === confirmPassword) return true;'],
  ['a TypeScript type', 'interface Login { user: string; password: string; }'],
  ['a Rust type', 'pub struct Creds { password: Option<String>, }'],
  ['a Python default', 'def login(username, password=None):'],
  ['a keyword argument', 'client.login(user, password=password)'],
  ['a variable passed on', 'client.login(user, password=secret)'],
  ['a schema', 'password: z.string().min(12)'],
  ['a JSON schema', '"password": {"type": "string", "minLength": 12}'],
  ['an environment lookup', 'const apiKey = process.env.OPENAI_API_KEY;'],
  ['a Python environment lookup', 'api_key = os.environ["OPENAI_API_KEY"]'],
  ['a template literal header', 'headers: { Authorization: `Bearer ${token}` }'],
  ['an Authorization header placeholder', 'Authorization: Bearer <token>'],
  ['an Authorization scheme alone', 'Set Authorization: Bearer on each request.'],
  ['prose about bearer tokens', 'Bearer tokens are sent in the Authorization header.'],
  ['a password hash call', 'password_hash = bcrypt.hashpw(pw, salt)'],
  ['a Python one-liner', 'if not password: raise ValueError("missing")'],
  ['a token count', 'token_count = 42'],
  ['key=value', 'Pass options as key=value pairs.'],
  ['token: undefined', 'token: undefined'],
  ['a max-tokens setting', 'max_tokens: 4096'],
  ['a tokenizer name', 'tokenizer: bert-base-uncased'],
  ['a primary key', 'primary_key = "user_id"'],
  ['a cache key made of words', 'cache_key = user_42_profile'],
  ['a region', 'kms_key_region: eu-west-1'],
  ['a key file path', 'key_file: /etc/ssl/private/server.key'],
  ['a relative key path', 'ssh_key_path=./deploy/keys/id_ed25519.pub'],
  ['file paths', 'See src/core/secrets.ts and test/unit/secrets.test.ts.'],
  ['a UUID in prose', 'The request 550e8400-e29b-41d4-a716-446655440000 failed twice.'],
  ['a git SHA', 'Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b (see PR #42).'],
  ['a short SHA and a version', 'Bumped to v2.3.1 in a1b2c3d.'],
  ['the working directory', 'PWD=/work/main\nOLDPWD=/home/dev'],
  ['docker -u', 'docker run -u 1000:1000 node:20'],
  ['-p flags that are not passwords', 'mkdir -p build && docker run -p 8080:80 web && mysql -u root -p app'],
  ['an XML placeholder', '<password>${env.DEPLOY_PASSWORD}</password>'],
  ['--password-stdin', 'echo "$TOKEN" | docker login ghcr.io -u me --password-stdin'],
  ['a flag in prose', 'Use the --password option only in CI.'],
  ['a URL with a port', 'Open https://localhost:8080/admin and http://[::1]:3000/.'],
  ['an SSH remote', 'git@github.com:ltm-tools/ltm-vscode.git'],
  ['a Stripe publishable key (public by design)', 'pk_' + 'test_' + 'TYooMQauvdEDq54NiTphI7jx'],
  ['a session ID', 'session 3b241101-e2bb-4255-8caf-4136c566a962 ended'],
  ['code with key-like names', 'const keyboardLayout = "qwerty";\nconst monkeyPatch = true;'],
  ['a format string', "key = '%s/PKG-INFO' % info_dir\ncreds = ' --password=%s' % pw"],
  ['SQL parameters', 'UPDATE users SET password = :password WHERE id = @id; -- or password = $1, password = ?'],
  ['JS void', 'let userPass = void 0;'],
  ['an error message', 'raise TypeError("pwd: expected bytes")'],
  ['snake_case names given to a key', 'RC2_KEY = rc2_key_st'],
  ['the BEGIN line quoted in code', "if (!pem.startsWith('-----BEGIN PRIVATE KEY-----')) throw new Error('not PKCS#8');\nconst next = 1;"],
  ['ordinary code', 'for (const [key, value] of Object.entries(tokens)) map.set(key, value);'],
];

describe('redactSecrets: what is left alone', () => {
  for (const [what, text] of negatives) {
    it(what, () => {
      assert.deepEqual(redactSecrets(text), { text, redactions: [] });
    });
  }

  it('leaves text without secrets unchanged', () => {
    assert.deepEqual(redactSecrets(''), { text: '', redactions: [] });
    assert.deepEqual(redactSecrets('Nothing secret here.'), { text: 'Nothing secret here.', redactions: [] });
  });
});

describe('redactSecrets: idempotence', () => {
  /** Pieces that make up secrets, near misses and markers, so that random text often comes close to a rule. */
  const fragment = fc.oneof(
    fc.constantFrom(
      'password', 'passwd', 'pwd', 'DB_PASS', 'api_key', 'client_secret', 'MY_TOKEN', 'secret', 'key', 'token', 'auth',
      'Authorization', 'Bearer ', 'Basic ', 'AccountKey', 'heroku ', 'curl -u ', 'machine h login u password ', '--password ',
      '=', ': ', ':=', '=>', '"', "'", '`', ' ', '\n', ';', ',', '&', '?', '@', ':', '://', '/', '.', '-', '_', '(', ')', '{', '}',
      '${', '$', '<', '>', '*', '!', '[', ']', '[REDACTED ', '[REDACTED assigned secret]', '[REDACTED GitHub token]', '[redacted generic secret]',
      'postgres://u:', 'https://', 'hooks.' + 'slack.com/services/', 'sk-' + 'ant-', 'gh' + 'p_', 'xo' + 'xb-', 'AK' + 'IA', 'ey' + 'J',
      'S' + 'G.', 'S' + 'K', 'ke' + 'y-', 'sk' + '_test_', '-----BEGIN ' + 'PRIVATE KEY-----', '-----END PRIVATE KEY-----',
      '123456789:', 'None', 'null', 'process.env.X', 'hunter2',
    ),
    fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 1, maxLength: 45 }),
    fc.string({ unit: fc.constantFrom(...HEX), minLength: 1, maxLength: 40 }),
    fc.string({ maxLength: 4 }),
  );
  const secretish = fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(''));
  const anyText = fc.oneof(
    { weight: 6, arbitrary: secretish },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme' }) },
  );

  it('redacting a redacted text changes nothing and reports nothing', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = redactSecrets(text);
        const twice = redactSecrets(once.text);
        assert.equal(twice.text, once.text);
        assert.deepEqual(twice.redactions, []);
      }),
      { numRuns: 1500 },
    );
  });

  it('is idempotent on every positive example', () => {
    for (const p of positives) {
      const once = redactSecrets(p.text).text;
      assert.deepEqual(redactSecrets(once), { text: once, redactions: [] }, p.what);
    }
  });
});

describe('redactSecrets: performance', () => {
  /** Fragments that would make a careless pattern backtrack: unterminated assignments, Bearer with no token, BEGIN with no END. */
  function adversarial(length: number): string {
    let state = 7;
    const pick = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return Math.floor((state / 2147483648) * n);
    };
    const others = ['"', ': ', ' ', '\n', 'token=', '[REDACTED ', '://u:', '${'];
    const parts: string[] = [];
    let size = 0;
    while (size < length) {
      const r = pick(10);
      const piece = r < 3 ? 'password=' : r < 5 ? 'a'.repeat(1 + pick(400)) : r < 7 ? 'Bearer ' : r < 8 ? '-----BEGIN ' : others[pick(others.length)]!;
      parts.push(piece);
      size += piece.length;
    }
    return parts.join('').slice(0, length);
  }

  const inputs: Array<[string, string]> = [
    ['repeated password=', 'password='.repeat(111_112).slice(0, 1_000_000)],
    ['password= a*N Bearer -----BEGIN', ('password=' + 'a'.repeat(5) + 'Bearer ' + '-----BEGIN ').repeat(31_250).slice(0, 1_000_000)],
    ['one long run of a', 'a'.repeat(1_000_000)],
    ['Bearer with no token', 'Bearer '.repeat(142_858).slice(0, 1_000_000)],
    ['BEGIN with no key', '-----BEGIN '.repeat(90_910).slice(0, 1_000_000)],
    ['a mixture', adversarial(1_000_000)],
  ];
  for (const [what, text] of inputs) {
    it(`redacts 1,000,000 hostile characters (${what}) in under 500 ms`, () => {
      assert.equal(text.length, 1_000_000);
      redactSecrets(text.slice(0, 10_000)); // compile the patterns first
      const started = performance.now();
      const result = redactSecrets(text);
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 500, `took ${elapsed.toFixed(0)} ms`);
      if (text.startsWith('password=')) assert.ok(result.text.startsWith('password=[REDACTED assigned secret]'), 'passwords are still redacted');
    });
  }
});

describe('shannonEntropy', () => {
  it('measures bits per character', () => {
    assert.equal(shannonEntropy(''), 0);
    assert.equal(shannonEntropy('aaaa'), 0);
    assert.equal(shannonEntropy('abab'), 1);
    assert.equal(shannonEntropy('0123456789abcdef'), 4);
    assert.ok(shannonEntropy('undefined') < 3);
  });
});

describe('describeRedactions', () => {
  it('names each kind, with a count when there is more than one', () => {
    assert.equal(describeRedactions([]), '');
    assert.equal(describeRedactions([{ kind: 'GitHub token', count: 1 }]), 'GitHub token');
    assert.equal(
      describeRedactions([
        { kind: 'assigned secret', count: 3 },
        { kind: 'Slack webhook URL', count: 1 },
      ]),
      '3× assigned secret, Slack webhook URL',
    );
  });

  it('describes what redactSecrets reports', () => {
    const result = redactSecrets(`password=a1 password=b2 ${'AK' + 'IA' + rand(UPPER + DIGITS, 16)}`);
    assert.equal(describeRedactions(result.redactions), 'AWS access key, 2× assigned secret');
  });
});
