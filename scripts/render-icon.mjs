// Renders media/icon.svg to the 128×128 media/icon.png the marketplace shows (needs Debian's chromium).
// node scripts/render-icon.mjs
import { chromium } from 'playwright-core';
import fs from 'node:fs';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
await page.setContent(`<html><body style="margin:0;background:transparent">${fs.readFileSync('media/icon.svg', 'utf8')}</body></html>`);
await page.screenshot({ path: 'media/icon.png', omitBackground: true });
await browser.close();
