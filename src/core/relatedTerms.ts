/**
 * The semantic layer of search: a query word also reaches the words people
 * use for the same thing ("RAM" → memory, heap, OOM; "billed" → charged,
 * payment), at a lower weight than the word itself, so that a memory written
 * in other words is found without pushing aside one that uses the query's own.
 *
 * The vocabulary is developerTerms.ts. It is matched by stem, so "charged" and
 * "charges" are one member, and members of several words ("log in", "took too
 * long") are recognised as phrases in the query's running text, stop words
 * included. Everything is in memory and offline: no model, no download.
 */
import { DEVELOPER_TERM_GROUPS } from './developerTerms';
import { indexTerm, stemOf, tokenize } from './analyzer';

/** The stems a query word reaches besides its own forms, each with the weight of a match on it (≤ 1). */
export type Expansions = ReadonlyMap<string, ReadonlyMap<string, number>>;

interface Phrase {
  /** Stems of the phrase's tokens, stop words included ("log in" → log, in). */
  stems: string[];
  group: number;
}

/** The stem of a token as this layer compares them (stop words kept: phrases need them). */
function tokenStem(token: string): string {
  return stemOf(token.toLowerCase());
}

/**
 * What a RelatedTerms holds, in a form JSON can carry: the bundles embed the
 * developer vocabulary's tables, computed when they are built, so that a fresh
 * process does not stem its ~6,000 words first (~18 ms of a cold CLI recall).
 */
export interface VocabularyTables {
  /** Group numbers by the stem of a one-word member. */
  groupsOfStem: [stem: string, groups: number[]][];
  /** Members of several words: the stems of their tokens, and their group. */
  phrases: [stems: string[], group: number][];
  /** Per group: the stems of its one-word members that are indexed words. */
  groupStems: string[][];
}

/** The tables of a vocabulary written as groups of comma-separated members (see developerTerms.ts). */
export function vocabularyTables(groups: readonly string[]): VocabularyTables {
  const groupsOfStem = new Map<string, number[]>();
  const phrases: [string[], number][] = [];
  const groupStems: string[][] = [];
  groups.forEach((line, group) => {
    const stems = new Set<string>();
    for (const member of line.split(',')) {
      // A leading dot (".env", ".npmrc") makes an empty first token: the member is its word.
      const tokens = tokenize(member.trim()).filter((token) => token.length > 0);
      if (tokens.length === 0) continue;
      if (tokens.length === 1) {
        const term = indexTerm(tokens[0]!);
        if (!term) continue;
        const stem = stemOf(term);
        stems.add(stem);
        const list = groupsOfStem.get(stem) ?? [];
        if (!list.includes(group)) list.push(group);
        groupsOfStem.set(stem, list);
      } else {
        phrases.push([tokens.map(tokenStem), group]);
      }
    }
    groupStems[group] = [...stems];
  });
  return { groupsOfStem: [...groupsOfStem], phrases, groupStems };
}

export class RelatedTerms {
  /** Group numbers by the stem of a one-word member. */
  private readonly groupsOfStem: ReadonlyMap<string, readonly number[]>;
  /** Phrases by the stem of their first token. */
  private readonly phrasesByFirst = new Map<string, Phrase[]>();
  /** Per group: the stems of its one-word members that are indexed words (what a search can reach). */
  private readonly groupStems: readonly (readonly string[])[];

  /** From groups of comma-separated members, or from the tables they make. */
  constructor(vocabulary: readonly string[] | VocabularyTables) {
    const tables = Array.isArray(vocabulary) ? vocabularyTables(vocabulary) : (vocabulary as VocabularyTables);
    this.groupsOfStem = new Map(tables.groupsOfStem);
    this.groupStems = tables.groupStems;
    for (const [stems, group] of tables.phrases) {
      const list = this.phrasesByFirst.get(stems[0]!) ?? [];
      list.push({ stems, group });
      this.phrasesByFirst.set(stems[0]!, list);
    }
  }

  /** How many groups the vocabulary holds. */
  get groups(): number {
    return this.groupStems.length;
  }

  /**
   * For each indexed word of the query, the other stems its groups reach.
   * A phrase's group is credited to the phrase's first indexed word ("log in"
   * → log), so matching the group counts as matching that word once.
   */
  expand(query: string): Expansions {
    const tokens = tokenize(query);
    // Each token lower-cased and stemmed once: a token's stem is its word's (indexTerm only lower-cases,
    // or drops it). A similarity check expands four texts of 1,000 characters for every stored memory.
    const stems = tokens.map(tokenStem);
    const expansions = new Map<string, Map<string, number>>();
    const credit = (word: string, own: string, group: number): void => {
      let reached = expansions.get(word);
      for (const stem of this.groupStems[group]!) {
        if (stem === own) continue;
        if (!reached) expansions.set(word, (reached = new Map()));
        reached.set(stem, 1);
      }
    };
    tokens.forEach((token, at) => {
      const stem = stems[at]!;
      const groups = this.groupsOfStem.get(stem);
      const phrases = this.phrasesByFirst.get(stem);
      if (!groups && !phrases) return;
      const word = indexTerm(token);
      if (word && groups) for (const group of groups) credit(word, stem, group);
      for (const phrase of phrases ?? []) {
        if (!phrase.stems.every((phraseStem, i) => stems[at + i] === phraseStem)) continue;
        // The phrase counts for its first word that the index sees (not a stop word).
        for (let i = 0; i < phrase.stems.length; i++) {
          const inner = indexTerm(tokens[at + i]!);
          if (inner) {
            credit(inner, stems[at + i]!, phrase.group);
            break;
          }
        }
      }
    });
    return expansions;
  }
}

/**
 * The developer vocabulary's tables as JSON, put in by the build (esbuild.mjs
 * `define`); not defined when the sources run as they are (tests, tsx).
 */
declare const LTM_DEVELOPER_VOCABULARY: string | undefined;

let developerTerms: RelatedTerms | null = null;

/** The developer vocabulary: from the tables the build embedded, else built on first use. */
export function developerVocabulary(): RelatedTerms {
  return (developerTerms ??= new RelatedTerms(
    typeof LTM_DEVELOPER_VOCABULARY === 'string' ? (JSON.parse(LTM_DEVELOPER_VOCABULARY) as VocabularyTables) : DEVELOPER_TERM_GROUPS,
  ));
}
