/**
 * Which links from memory text may be followed: http(s) and mailto only. The
 * Markdown renderer (markdown.ts) keeps no other link, and the extension
 * checks again before it opens one (a message from the page is not trusted).
 */
const SAFE_LINK_SCHEMES = ['http:', 'https:', 'mailto:'] as const;

export function isSafeLinkUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return false;
  }
  return (SAFE_LINK_SCHEMES as readonly string[]).includes(parsed.protocol);
}
