import { strict as assert } from 'node:assert';
import { isSafeLinkUrl } from '../../src/shared/links';
import { renderMarkdown } from '../../src/shared/markdown';

describe('memory text as Markdown (the memory panel)', () => {
  it('renders Markdown: headings, emphasis, lists, code', () => {
    const html = renderMarkdown('# Pool\n\n**Raise** it:\n\n- to `50`\n\n```ts\nconst a = 1 < 2;\n```');
    assert.match(html, /<h1>Pool<\/h1>/);
    assert.match(html, /<strong>Raise<\/strong>/);
    assert.match(html, /<li>to <code>50<\/code><\/li>/);
    assert.match(html, /<pre><code class="language-ts">const a = 1 &lt; 2;/);
  });

  it('shows raw HTML as text: no element comes from memory text', () => {
    const html = renderMarkdown('<script>document.title="pwned"</script> <img src=x onerror=alert(1)> <b>bold</b>\n\n<div onclick="x()">block</div>');
    assert.doesNotMatch(html, /<script|<img|<b>|<div/);
    assert.match(html, /&lt;script&gt;document.title=&quot;pwned&quot;&lt;\/script&gt;/);
    assert.match(html, /&lt;div onclick=&quot;x\(\)&quot;&gt;block&lt;\/div&gt;/);
  });

  it('keeps http(s) and mailto links, linkifies bare URLs, and leaves every other link as text', () => {
    const html = renderMarkdown('[docs](https://example.com/a?b=1) <http://x.org> www.example.com [mail](mailto:a@b.c)');
    assert.match(html, /<a href="https:\/\/example.com\/a\?b=1">docs<\/a>/);
    assert.match(html, /<a href="http:\/\/x.org">/);
    assert.match(html, /<a href="http:\/\/www.example.com">www.example.com<\/a>/);
    assert.match(html, /<a href="mailto:a@b.c">mail<\/a>/);
    for (const bad of ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:text/html,hi', 'vbscript:x', 'file:///etc/passwd', 'command:ltm.forget', 'src/a.ts', '#top']) {
      const rendered = renderMarkdown(`[x](${bad})`);
      assert.doesNotMatch(rendered, /<a /, `${bad} became a link: ${rendered}`);
    }
  });

  it('makes no image (the CSP loads none from outside): the link text stays', () => {
    const html = renderMarkdown('![diagram](https://example.com/d.png)');
    assert.doesNotMatch(html, /<img/);
    assert.match(html, /diagram/);
  });

  it('isSafeLinkUrl allows http, https and mailto only', () => {
    for (const ok of ['https://a.b/c', 'http://a.b', 'mailto:x@y.z', ' HTTPS://A.B ']) assert.ok(isSafeLinkUrl(ok), ok);
    for (const no of ['javascript:alert(1)', ' javascript:alert(1)', 'data:x', 'file:///x', 'vscode://x', 'command:x', 'a/b', '', 'http//x']) assert.ok(!isSafeLinkUrl(no), no);
  });
});
