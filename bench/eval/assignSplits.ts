/**
 * node --import tsx bench/eval/assignSplits.ts
 *
 * Writes each query's `split` in bench/eval/queries.json from the seeded draw
 * (drawHeldout). Run it only when queries are added, never after looking at
 * results to move a query: the unit test checks the file matches the draw.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVAL_DIR, drawHeldout, loadEvalSet } from './evalSet';

const { queries } = loadEvalSet();
const heldout = drawHeldout(queries);
const next = queries.map((q) => ({ ...q, split: heldout.has(q.id) ? 'heldout' : 'tune' }));
fs.writeFileSync(path.join(EVAL_DIR, 'queries.json'), `${JSON.stringify(next, null, 2)}\n`);
console.log(`${heldout.size} of ${queries.length} queries held out`);
