import { strict as assert } from 'node:assert';
import { indexTerm, stemOf, tokenize } from '../../src/core/analyzer';
import { DEVELOPER_TERM_GROUPS } from '../../src/core/developerTerms';
import { developerVocabulary } from '../../src/core/relatedTerms';

/** The stems of a group's one-word members that the index keeps. */
function wordStems(line: string): Set<string> {
  const stems = new Set<string>();
  for (const member of line.split(',')) {
    const tokens = tokenize(member.trim());
    const word = tokens.length === 1 ? indexTerm(tokens[0]!) : null;
    if (word) stems.add(stemOf(word));
  }
  return stems;
}

function reached(query: string, word: string): string[] {
  return [...(developerVocabulary().expand(query).get(word)?.keys() ?? [])];
}

describe('developerTerms', () => {
  it('has groups of at least two members, each one a searchable word or phrase', () => {
    assert.ok(developerVocabulary().groups >= 100, `${developerVocabulary().groups} groups`);
    for (const line of DEVELOPER_TERM_GROUPS) {
      const members = line.split(',').map((m) => m.trim());
      assert.ok(members.length >= 2, `"${line}" has two members or more`);
      for (const member of members) {
        assert.ok(member.length > 0, `no empty member in "${line}"`);
        const tokens = tokenize(member);
        assert.ok(tokens.length > 0 && tokens.some((t) => indexTerm(t) !== null), `"${member}" has a word the index keeps`);
        // A lone digit or letter would pull a group into any query that has one.
        if (tokens.length === 1) assert.ok(tokens[0]!.length >= 2, `"${member}" is not a lone character`);
      }
    }
  });

  it('keeps groups tight: no word in more than three groups, no group twice', () => {
    // A word in many groups reaches most of the vocabulary: every query using it would drift.
    const groupsOf = new Map<string, number>();
    const seen = new Set<string>();
    for (const line of DEVELOPER_TERM_GROUPS) {
      const stems = wordStems(line);
      const key = [...stems].sort().join(' ');
      assert.ok(!seen.has(key) || key === '', `the group "${line}" is there twice (by stem)`);
      seen.add(key);
      for (const stem of stems) groupsOf.set(stem, (groupsOf.get(stem) ?? 0) + 1);
    }
    const loose = [...groupsOf].filter(([, n]) => n > 3);
    assert.deepEqual(loose, [], 'words in more than three groups');
  });

  it('relates the words developers use for the same thing', () => {
    assert.ok(reached('pods terminated for hogging RAM', 'ram').includes(stemOf('memory')));
    assert.ok(reached('pods terminated for hogging RAM', 'terminated').includes(stemOf('oomkilled')));
    assert.ok(reached('shoppers billed twice', 'billed').includes(stemOf('charged')));
    assert.ok(reached('the emulator cannot reach my laptop', 'laptop').includes('localhost'));
  });
});
