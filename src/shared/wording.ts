/**
 * Counts in words, for every text a person reads (CLI, MCP answers, VS Code):
 * "1 memory", "2 memories", never "memory(s)".
 */
export function countOf(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
