/**
 * Developer vocabulary: groups of words and phrases that people and error
 * messages use for the same thing in software work. A query word in a group
 * also reaches the group's other words (see relatedTerms.ts), so "the pod was
 * killed for hogging RAM" meets a memory about "OOMKilled at the memory limit".
 *
 * Written by hand from general software knowledge (not from any one project),
 * because general thesauri miss this sense of the words: WordNet's "ram" is a
 * sheep and its "pod" a seed case. Keep groups tight: every member should be a
 * fair stand-in for every other in some developer's sentence, since a loose
 * group costs precision on every query that uses it.
 *
 * Format: one group per string, members separated by commas. A member of
 * several words is recognised in a query as a phrase ("log in", "took too
 * long"); single words are what the group adds to a search.
 */
export const DEVELOPER_TERM_GROUPS: readonly string[] = [
  // Identity and access
  'login, log in, logged in, logon, sign in, signed in, signin, signon, authenticate, authentication, authenticated, auth',
  'logout, log out, signout, sign out, logged out',
  'signup, sign up, register, registration, onboarding',
  'password, passphrase, credential, credentials',
  'session, cookie, remember me, stay signed in, keep signed in, persisted',
  'token, jwt, bearer, access token',
  'identity provider, idp, oauth, oidc, sso, auth provider, auth0, okta, keycloak',
  'permission, permissions, authorization, authorisation, authorize, authorise, access control, rbac, role, roles',
  'forbidden, 403, denied, not allowed, unauthorized, unauthorised, 401, rejected',
  'key, keys, signing key, jwks, certificate, cert, keypair, private key, public key',
  'rotate, rotated, rotation, rolled over, replaced keys, renewed',
  'secret, secrets, api key, credentials, vault',
  'encrypt, encryption, encrypted, cipher, tls, ssl, https',

  // People
  'user, users, customer, customers, shopper, shoppers, client, clients, visitor, visitors, buyer, buyers, people, person, account holder, end user',
  'admin, administrator, superuser, operator, staff',
  'team, teams, workspace, organisation, organization, tenant',

  // Money
  'payment, payments, charge, charged, charges, billed, billing, bill, pay, paid, purchase, purchases, checkout, transaction fee',
  'invoice, invoices, receipt, statement',
  'money, amount, amounts, price, prices, cost, total, totals, sum, sums, currency, cents, decimal, monetary',
  'refund, refunds, chargeback, reversal',
  'subscription, subscriptions, plan, plans, recurring billing',
  'stripe, paypal, adyen, braintree, payment provider, psp',

  // Duplicates and retries
  'twice, duplicate, duplicates, duplicated, double, doubled, second time, again, repeated, two times, three times',
  'retry, retries, retried, retrying, resend, resends, resent, resubmit, redelivered, redelivery, replay, replays, replayed',
  'idempotent, idempotency, exactly once, at most once, deduplicate, dedupe, dedup',
  'timeout, timeouts, timed out, timed-out, took too long, deadline exceeded, hangs, hung',

  // Failure and severity
  'crash, crashes, crashed, crashing, panic, panics, abort, aborted, segfault, segmentation fault, fatal, dies, died, blew up',
  'killed, kill, kills, terminated, terminate, terminates, sigkill, sigterm, evicted, oomkilled, exit code 137, shut down',
  'restart, restarts, restarted, restarting, crashloopbackoff, crash loop, bounced, reboot',
  'error, errors, failure, failures, failed, fails, failing, exception, exceptions',
  'flaky, flakey, intermittent, intermittently, random failures, at random, sometimes fails, nondeterministic',
  'bug, bugs, defect, regression, regressions, broke, broken, breaks',
  'warning, warnings, deprecation, deprecated',
  'rejected, refused, refuses, denied, declined, blocked',
  'corrupt, corrupted, corruption, garbled, truncated, lost, dropped, stripped, mojibake',

  // Memory and resources
  'memory, ram, heap, oom, out of memory, oomkilled, memory limit, rss, allocation, allocations',
  'leak, leaks, leaking, memory leak, grows, growing, unbounded',
  'cpu, processor, cores, cpu bound, cpu-bound, busy loop, spinning',
  'disk, storage, volume, disk space, filesystem, no space left',
  'limit, limits, quota, quotas, cap, capped, ceiling, maximum, max',
  'workload, workloads, pod, pods, container, containers, deployment, deployments, replica, replicas, instance, instances, service, services, node process',

  // Speed
  'slow, slower, slowness, sluggish, latency, lag, laggy, takes seconds, performance, perf, degraded, crawling',
  'fast, faster, speed up, sped up, speedup, quick, quicker, optimise, optimize, optimised, optimized',
  'waiting, wait, waits, stuck, blocked, hangs, pending, stalled',
  'throughput, load, under load, traffic, concurrency, concurrent, parallel, simultaneous',
  'cache, caching, cached, memoize, memoise, memoized',

  // Data and databases
  'database, databases, db, postgres, postgresql, mysql, sqlite, sql, rdbms',
  'table, tables, column, columns, row, rows, record, records, schema',
  'query, queries, select, lookup, lookups, search, find, finding, fetch, fetching',
  'index, indexes, indices, indexed, expression index, btree',
  'scan, seq scan, sequential scan, full table scan, table scan',
  'migration, migrations, migrate, schema change, alter table, ddl',
  'transaction, transactions, commit, rollback, isolation, serializable',
  'deadlock, deadlocks, lock, locks, locking, locked, contention, blocked by, waits for',
  'connection, connections, pool, pooling, connection pool, too many clients, connection slots, max connections',
  'pagination, paginate, paging, pages, page, offset, cursor, keyset, infinite scroll, deep pages',
  'sort, sorted, sorting, order by, ordering',
  'case, case-insensitive, case insensitive, capitalisation, capitalization, uppercase, lowercase, lower, upper, letter case',
  'email, emails, mail, e-mail, mail address, email address, inbox',
  'notification, notifications, notice, notices, alert, alerts, message, messages, push, digest',
  'backup, backups, restore, snapshot, dump, pg_dump',
  'replication, replica lag, read replica, primary, standby, failover',
  'orm, prisma, sqlalchemy, typeorm, sequelize, activerecord, ecto',
  'null, nulls, nil, none, undefined, missing, empty',
  'decimal, float, floating point, numeric, rounding, precision, fractions, fraction, cents, drift',
  'date, dates, datetime, timestamp, timestamps, timestamptz, time zone, timezone, utc, locale time, birthday',
  'csv, spreadsheet, excel, xlsx, tsv, sheet, comma separated',
  'postal code, postal codes, postcode, postcodes, zip, zip code, zipcode',
  'import, ingest, load, loading, read_csv, etl',
  'export, exports, download, report, reports',
  'json, serialization, serialisation, serialize, serialise, marshal, unmarshal, encode, decode',

  // Jobs and scheduling
  'job, jobs, task, tasks, worker, workers, background job, batch',
  'queue, queues, queued, broker, message broker, rabbitmq, kafka, sqs, redis queue, bullmq, celery, sidekiq',
  'consumer, consumers, subscriber, subscribers, worker process, listener',
  'cron, cronjob, crontab, scheduled, schedule, scheduler, nightly, hourly, daily, weekly, periodic, recurring',
  'acknowledge, ack, acked, acks, visibility timeout, lease',

  // Network
  'network, networking, connect, connection refused, econnrefused, unreachable, cannot reach, can\'t reach, can not reach, no route to host',
  'localhost, 127.0.0.1, loopback, local machine, my computer, my machine, the host, host machine, laptop',
  'ipv6, ipv4, ip address, address family, dual stack',
  'dns, resolve, resolves, resolution, hostname, host name, no such host, enotfound, getaddrinfo',
  'proxy, reverse proxy, dev proxy, nginx, load balancer, ingress',
  'port, ports, listen, listening, bind, bound',
  'request, requests, call, calls, http, api call, endpoint, endpoints, route, routes',
  'response, responses, reply, answer, status code',
  'econnreset, socket hang up, connection reset, reset by peer, broken pipe',
  'cors, cross-origin, origin, preflight',
  'websocket, websockets, socket, sse, server-sent events, long polling',
  'upload, uploads, uploading, multipart, file upload, attachment',
  'rate limit, rate limited, rate limiting, throttle, throttled, throttling, 429, too many requests',

  // Frontend
  'frontend, front end, front-end, client side, browser, web app, ui, spa, the site, website, web page',
  'backend, back end, back-end, server side, api, server, service',
  'component, components, widget, widgets, view, views, screen, screens',
  'theme, themes, dark mode, light mode, night mode, colour scheme, color scheme, prefers-color-scheme',
  'flash, flicker, flickers, flashes, blink, fouc',
  'bright, white, light, glare',
  'render, renders, rendering, rerender, re-render, paint, repaint, hydration, hydrate',
  'style, styles, css, stylesheet, tailwind, styling',
  'form, forms, input, inputs, field, fields, validation, validate',
  'reload, reloads, refresh, refreshes, page load, revisit',
  'localstorage, local storage, sessionstorage, indexeddb, persist, persisted, persistence',
  'state, store, stores, redux, zustand, context, global state',
  'router, routing, redirect, redirects, navigation, navigate',
  'image, images, photo, photos, picture, pictures',
  'accessibility, a11y, screen reader, aria',
  'translation, translations, i18n, localisation, localization, locale',

  // Mobile
  'mobile, phone, phones, handset, smartphone, ios, android, iphone, mobile app, phone app, native app',
  'emulator, emulators, simulator, simulators, virtual device, avd',
  'app store, play store, testflight, release build',

  // Build, tools and CI
  'build, builds, building, compile, compiles, compiled, compiling, compilation, bundle, bundling, bundler',
  'link, links, linker, linking, ld, mold, lld',
  'incremental, incremental build, rebuild, rebuilds, recompile',
  'dependency, dependencies, package, packages, library, libraries, module, modules, crate, crates, gem, gems',
  'install, installs, installed, installing, npm install, pip install, apt-get',
  'upgrade, upgraded, upgrading, update, updated, bump, bumped, new version, version',
  'runtime, node, nodejs, node.js, deno, bun, jvm, interpreter',
  'ci, continuous integration, pipeline, pipelines, github actions, gitlab ci, jenkins, workflow',
  'deploy, deploys, deployed, deploying, deployment, release, released, ship, shipped, rollout, go live, production, prod, live',
  'staging, preview environment, test environment, dev environment, development',
  'environment variable, environment variables, env var, env vars, env, dotenv, .env, config, configuration, settings',
  'docker, dockerfile, image, container image, compose, docker compose',
  'kubernetes, k8s, kubectl, helm, cluster',
  'test, tests, testing, spec, specs, unit test, integration test, e2e, end to end',
  'mock, mocks, stub, stubs, fake, fakes, fixture, fixtures',
  'lint, linter, linting, eslint, prettier, formatter, formatting',
  'typescript, type error, types, typing, type check, typecheck, tsc',
  'log, logs, logging, logger, structured logging',
  'monitoring, metrics, observability, tracing, traces, dashboard, alerting',
  'monorepo, workspaces, packages folder, shared package',

  // Machine learning and data
  'model, models, classifier, classifiers, regressor, estimator, predictor',
  'train, training, trained, fit, fitted, fitting',
  'evaluation, evaluate, validation, validate, cross-validation, held-out, holdout, test set, test rows',
  'leak, leakage, data leakage, contamination',
  'normalise, normalize, normalisation, normalization, scaler, scaling, standardize, standardise, preprocessing',
  'accuracy, auc, score, scored, metric, precision, recall',
  'dataframe, dataframes, pandas, polars, dtype',
  'gpu, cuda, vram',
];
