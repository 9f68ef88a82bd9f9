/**
 * Run in a fresh, small Node process (bundled by bench/lib/child.ts): the MCP
 * SDK client's calls to a server (`ltm serve` or a floor server), or bare
 * HTTP POSTs, timed one by one (bench/lib/mcpTraffic.ts).
 *
 *   node mcpCalls.js < job.json      (prints one JSON line: CallsResult)
 */
import { jobMain } from '../lib/jobMain';
import { runCalls } from '../lib/mcpTraffic';

jobMain(runCalls);
