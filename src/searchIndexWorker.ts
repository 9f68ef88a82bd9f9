/**
 * dist/search-index-worker.js: the worker thread that indexes the memories a
 * store hands it while it opens without a saved search index
 * (src/core/searchIndexAside.ts).
 */
import { parentPort } from 'node:worker_threads';
import { indexHandedMemories } from './core/searchIndexAside';

if (parentPort) indexHandedMemories(parentPort);
