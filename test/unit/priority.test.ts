import { strict as assert } from 'node:assert';
import { importanceOf, priorityBreakdown, sessionDifficulty } from '../../src/core/priority';

describe('priority', () => {
  const base = { difficulty: 0.5, tags: [] as string[], stats: { access_count: 5, last_session: 3 }, created_session: 1, session_count: 3 };

  it('is difficulty·0.4 + recency·0.3 + frequency·0.3', () => {
    const p = priorityBreakdown(base);
    assert.equal(p.recency, 1);
    assert.equal(p.frequency, 0.5);
    assert.ok(Math.abs(p.priority - (0.2 + 0.3 + 0.15)) < 1e-12);
  });

  it('decays recency by sessions since the last access', () => {
    const p = priorityBreakdown({ ...base, session_count: 7 });
    assert.equal(p.recency, 1 / 5);
  });

  it('caps frequency at 10 accesses', () => {
    assert.equal(priorityBreakdown({ ...base, stats: { access_count: 50, last_session: 3 } }).frequency, 1);
  });

  it('falls back to created_session for recency without stats', () => {
    const p = priorityBreakdown({ ...base, stats: undefined, created_session: 2 });
    assert.equal(p.recency, 1 / 2);
    assert.equal(p.frequency, 0);
  });

  it('applies importance boosts and clamps to [0, 1]', () => {
    assert.equal(priorityBreakdown({ ...base, tags: ['importance:critical'] }).priority, 1);
    assert.ok(Math.abs(priorityBreakdown({ ...base, tags: ['importance:important'] }).priority - 0.9) < 1e-12);
    assert.ok(Math.abs(priorityBreakdown({ ...base, tags: ['importance:low'] }).priority - 0.4) < 1e-12);
    const low = priorityBreakdown({ difficulty: 0, tags: ['importance:low'], stats: { access_count: 0, last_session: 0 }, created_session: 0, session_count: 100 });
    assert.equal(low.priority, 0);
    assert.equal(importanceOf(['importance:low', 'importance:critical']), 'critical');
  });

  it('computes session difficulty from failures, volume and compaction', () => {
    assert.equal(sessionDifficulty({ tool_successes: 0, tool_failures: 0, compacted: false }), 0);
    assert.ok(Math.abs(sessionDifficulty({ tool_successes: 15, tool_failures: 10, compacted: false }) - (0.4 * 0.5 + 0.5 * 0.3)) < 1e-12);
    assert.ok(Math.abs(sessionDifficulty({ tool_successes: 100, tool_failures: 0, compacted: true }) - 0.5) < 1e-12);
    assert.equal(sessionDifficulty({ tool_successes: 0, tool_failures: 60, compacted: true }), 1);
  });
});
