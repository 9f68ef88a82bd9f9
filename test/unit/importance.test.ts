import { strict as assert } from 'node:assert';
import {
  DEFAULT_IMPORTANCE,
  IMPORTANCE_LEVELS,
  IMPORTANCE_TAG_PREFIX,
  IMPORTANCE_TAGS,
  PRIORITY_WEIGHTS,
  importanceBoost,
  importanceOf,
  importanceTag,
  isImportance,
  isImportanceTag,
  priorityBreakdown,
  priorityScore,
  withImportance,
  type Importance,
} from '../../src/core/priority';

describe('importance: one table for the levels, their tags and their effect on priority', () => {
  it('has the documented levels, strongest first, with their boosts', () => {
    assert.deepEqual([...IMPORTANCE_LEVELS], ['critical', 'important', 'normal', 'low']);
    assert.equal(DEFAULT_IMPORTANCE, 'normal');
    assert.equal(IMPORTANCE_TAG_PREFIX, 'importance:');
    assert.deepEqual({ ...PRIORITY_WEIGHTS.importance }, { critical: 0.5, important: 0.25, normal: 0, low: -0.25 });
    const boosts = IMPORTANCE_LEVELS.map((level) => PRIORITY_WEIGHTS.importance[level]);
    assert.deepEqual(boosts, [...boosts].sort((a, b) => b - a), 'levels are listed strongest first');
  });

  it('recognises exactly its levels (the CLI checks --importance with it)', () => {
    for (const level of IMPORTANCE_LEVELS) assert.ok(isImportance(level));
    for (const other of ['', 'Critical', 'importance:critical', 'high', '__proto__']) assert.ok(!isImportance(other), other);
  });

  it('spells the tags from the prefix; the default level has none', () => {
    assert.deepEqual([...IMPORTANCE_TAGS], ['importance:critical', 'importance:important', 'importance:low']);
    for (const level of IMPORTANCE_LEVELS) assert.equal(importanceTag(level), `importance:${level}`);
    assert.ok(isImportanceTag('importance:critical'));
    assert.ok(isImportanceTag('importance:whatever'));
    assert.ok(!isImportanceTag('critical'));
    assert.ok(!isImportanceTag('Importance:critical'));
  });

  it('reads each level back from its tag, and the default from no tag', () => {
    for (const level of IMPORTANCE_LEVELS) {
      const tags = level === DEFAULT_IMPORTANCE ? ['database'] : ['database', importanceTag(level)];
      assert.equal(importanceOf(tags), level);
      assert.equal(importanceBoost(tags), PRIORITY_WEIGHTS.importance[level]);
    }
    assert.equal(importanceOf([]), DEFAULT_IMPORTANCE);
    assert.equal(importanceOf(['importance:unknown']), DEFAULT_IMPORTANCE);
  });

  it('lets the strongest tag win, in the order of IMPORTANCE_LEVELS', () => {
    for (const [i, stronger] of IMPORTANCE_LEVELS.entries()) {
      for (const weaker of IMPORTANCE_LEVELS.slice(i + 1)) {
        const tags = [importanceTag(weaker), importanceTag(stronger)];
        const expected: Importance = stronger === DEFAULT_IMPORTANCE ? weaker : stronger;
        assert.equal(importanceOf(tags), expected, tags.join(', '));
        assert.equal(importanceOf([...tags].reverse()), expected, [...tags].reverse().join(', '));
      }
    }
  });

  it('drives priority: each level adds its boost before clamping', () => {
    const base = { difficulty: 0.5, tags: [] as string[], stats: { access_count: 2, last_session: 4 }, created_session: 1, session_count: 5 };
    const plain = priorityBreakdown(base);
    const w = PRIORITY_WEIGHTS;
    const sum = plain.difficulty * w.difficulty + plain.recency * w.recency + plain.frequency * w.frequency;
    assert.ok(Math.abs(plain.priority - sum) < 1e-12);
    assert.equal(plain.frequency, 2 / w.frequencyCap);
    for (const level of IMPORTANCE_LEVELS) {
      const inputs = { ...base, tags: level === DEFAULT_IMPORTANCE ? [] : [importanceTag(level)] };
      const p = priorityBreakdown(inputs);
      const expected = Math.min(1, Math.max(0, sum + w.importance[level]));
      assert.equal(p.importance, level);
      assert.equal(p.importanceBoost, w.importance[level]);
      assert.ok(Math.abs(p.priority - expected) < 1e-12, `${level}: ${p.priority} ≠ ${expected}`);
      assert.equal(priorityScore(inputs), p.priority, 'priorityScore and priorityBreakdown agree');
    }
  });

  it('sets a level on a tag list: other importance tags removed, the new one last', () => {
    assert.deepEqual(withImportance(['x', 'importance:low', 'y'], 'critical'), ['x', 'y', 'importance:critical']);
    assert.deepEqual(withImportance(['importance:critical', 'x'], 'normal'), ['x']);
    assert.deepEqual(withImportance(['x', 'importance:important', 'importance:low'], 'important'), ['x', 'importance:important']);
    assert.deepEqual(withImportance([], 'low'), ['importance:low']);
    for (const level of IMPORTANCE_LEVELS) assert.equal(importanceOf(withImportance(['importance:critical', 'a'], level)), level);
  });

  it('cannot be changed at run time', () => {
    assert.ok(Object.isFrozen(PRIORITY_WEIGHTS));
    assert.ok(Object.isFrozen(PRIORITY_WEIGHTS.importance));
  });
});
