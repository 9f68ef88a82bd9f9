/**
 * Run in a fresh process (bundled by bench/lib/child.ts): the memory the
 * semantic layer (the developer vocabulary, src/core/relatedTerms.ts) adds to
 * a process that searches. The job carries the vocabulary's tables as the JSON
 * a shipped bundle embeds (esbuild.mjs `define`), read before the first
 * measurement as a bundle's text is; the child then builds the RelatedTerms a
 * process builds from it and expands the job's prompts, and prints the heap
 * and RSS growth after garbage collection.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { RelatedTerms, type VocabularyTables } from '../../src/core/relatedTerms';
import { jobMain } from '../lib/jobMain';

export interface VocabularyMemoryJob {
  /** JSON.stringify(vocabularyTables(DEVELOPER_TERM_GROUPS)), as the build embeds it. */
  tablesJson: string;
  prompts: string[];
}

export interface VocabularyMemoryResult {
  heapBytes: number;
  rssBytes: number;
  /** Related words the prompts reached: a check that the vocabulary was used. */
  expandedWords: number;
}

// This child is spawned without --expose-gc (runJobChild): ask V8 for gc() here.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function settled(): NodeJS.MemoryUsage {
  gc();
  gc();
  return process.memoryUsage();
}

jobMain<VocabularyMemoryJob, VocabularyMemoryResult>(async (job) => {
  const before = settled();
  const terms = new RelatedTerms(JSON.parse(job.tablesJson) as VocabularyTables);
  let expandedWords = 0;
  for (const prompt of job.prompts) expandedWords += terms.expand(prompt).size;
  const after = settled();
  return { heapBytes: after.heapUsed - before.heapUsed, rssBytes: after.rss - before.rss, expandedWords };
});
