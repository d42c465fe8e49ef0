// Drives MCP App views served by the host's browser path (host/appview) in headless Chromium, as
// a Neovim user's browser would open them. Reads a plan [{kind, url}] from the file in argv[2],
// does what a person would (waits for the view, clicks its buttons) and prints what each view
// showed as JSON on stdout. The Go test (viewbrowser_test.go) asserts on it and on the host side.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');
const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const WAIT = 60000;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const out = [];
try {
  for (const step of plan) {
    const page = await browser.newPage();
    const console_ = [];
    page.on('console', (m) => console_.push(m.text()));
    const r = { kind: step.kind };
    try {
      await page.goto(step.url);
      const f = page.frameLocator('#app');
      const text = (sel) => f.locator(sel).innerText({ timeout: WAIT });
      const changed = async (sel, from) => {
        const deadline = Date.now() + WAIT;
        for (;;) {
          const t = await text(sel);
          if (t !== from && t !== '') return t;
          if (Date.now() > deadline) return t;
          await page.waitForTimeout(100);
        }
      };
      switch (step.kind) {
      case 'clock':
        r.status = await changed('#status', 'starting');
        r.input = await changed('#input', '');
        r.result = await changed('#result', '');
        await f.locator('#tick').click();
        r.tick1 = await changed('#ticked', '');
        await f.locator('#tick').click();
        r.tick2 = await changed('#ticked', r.tick1);
        await f.locator('#escape').click();
        r.escapes = await changed('#escapes', '');
        await f.locator('#link').click();
        r.link = await changed('#linked', '');
        r.frameHeight = await page.locator('#app').evaluate((e) => e.style.height);
        r.cspViolations = console_.filter((l) => l.includes('Content Security Policy')).length;
        // The page's one-time address again: refused.
        const again = await browser.newPage();
        await again.goto(step.url);
        r.reload = await again.locator('body').innerText();
        await again.close();
        break;
      case 'basic':
        r.time1 = await changed('#server-time', 'Loading...');
        await f.locator('#get-time-btn').click();
        r.time2 = await changed('#server-time', r.time1);
        break;
      case 'budget':
        r.status = await changed('#status-bar', 'Allocated: $0 / $0');
        r.sliders = await f.locator('#sliders-container > *').count();
        break;
      case 'cohort':
        await f.locator('#root *').first().waitFor({ timeout: WAIT });
        r.text = (await text('#root')).slice(0, 200);
        break;
      }
    } catch (e) {
      r.error = String(e && e.message || e).slice(0, 500);
      r.console = console_.slice(-10);
    }
    if (process.env.VIEW_SCREENSHOTS) await page.screenshot({ path: `${process.env.VIEW_SCREENSHOTS}/${step.kind}.png` }); // README pictures
    out.push(r);
    await page.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
