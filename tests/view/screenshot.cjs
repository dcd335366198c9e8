#!/usr/bin/env node
// A screenshot of the live view (the built-in demo) from a real browser, for the README.
//   node tests/view/screenshot.cjs IKRIG [OUT.png]     (default OUT: build/view.png)
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const { launchBrowser, startView, stopView } = require('./browser.cjs');

(async () => {
  const ikrig = path.resolve(process.argv[2] || 'build/demo/src/host/ikrig');
  const out = path.resolve(process.argv[3] || 'build/view.png');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const view = await startView(ikrig, ['--port', '0']);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(view.url);
    await page.waitForFunction(() => window.ikrig && window.ikrig.frames > 30, null, { timeout: 15000 });
    await page.waitForTimeout(4000); // trails grow, the walker walks
    await page.screenshot({ path: out });
    console.log(`screenshot: ${out}`);
  } finally {
    await browser.close();
    await stopView(view);
  }
})().catch((e) => { console.error(e); process.exit(1); });
