import { strict as assert } from 'node:assert';
import { contrastOf, contrastRatio, effectiveBackground, parseCssColor, WCAG_AA_TEXT } from '../vscode/contrast';

describe('WCAG contrast of computed colours (the UI theme test’s arithmetic)', () => {
  it('parses the colours Chromium computes', () => {
    assert.deepEqual(parseCssColor('rgb(59, 59, 59)'), [59, 59, 59, 1]);
    assert.deepEqual(parseCssColor('rgba(0, 0, 0, 0)'), [0, 0, 0, 0]);
    assert.deepEqual(parseCssColor('rgba(255, 255, 255, 0.5)'), [255, 255, 255, 0.5]);
    assert.throws(() => parseCssColor('color(srgb 1 0 0)'), /not a computed rgb\(\) colour/);
  });

  it('gives the WCAG ratios: 21 for black on white, and #767676 is the lightest grey that passes AA on white', () => {
    const white = parseCssColor('rgb(255, 255, 255)');
    assert.equal(contrastRatio(parseCssColor('rgb(0, 0, 0)'), white), 21);
    assert.ok(contrastRatio(parseCssColor('rgb(118, 118, 118)'), white) >= WCAG_AA_TEXT);
    assert.ok(contrastRatio(parseCssColor('rgb(119, 119, 119)'), white) < WCAG_AA_TEXT);
  });

  it('finds what issue 12 saw: dark text on bright red, light green on white', () => {
    // Light Modern: badge.foreground #3B3B3B on charts.red #E51400; testing.iconPassed #73C991 on the editor's white.
    assert.ok(contrastOf({ what: 'badge', text: 'importance: critical', color: 'rgb(59, 59, 59)', backgrounds: ['rgb(229, 20, 0)'] }).ratio < 3);
    assert.ok(contrastOf({ what: 'status', text: 'Healthy', color: 'rgb(115, 201, 145)', backgrounds: ['rgba(0, 0, 0, 0)', 'rgb(255, 255, 255)'] }).ratio < 3);
  });

  it('paints transparent and translucent layers over the first opaque one behind them', () => {
    assert.deepEqual(effectiveBackground(['rgba(0, 0, 0, 0)', 'rgb(31, 31, 31)', 'rgb(255, 255, 255)']), [31, 31, 31, 1]);
    assert.deepEqual(effectiveBackground(['rgba(0, 0, 0, 0.5)', 'rgb(255, 255, 255)']), [127.5, 127.5, 127.5, 1]);
    // Nothing opaque: the browser's white canvas.
    assert.deepEqual(effectiveBackground(['rgba(0, 0, 0, 0)']), [255, 255, 255, 1]);
    // Translucent text is blended into its background before it is measured.
    assert.equal(contrastOf({ what: 'text', text: 'x', color: 'rgba(0, 0, 0, 0)', backgrounds: ['rgb(255, 255, 255)'] }).ratio, 1);
  });
});
