// End-to-end: headless Chromium (driven by playwright-core) opens the dashboard of a running
// head at COHORT_URL, checks it draws COHORT_EXPECT_NODES nodes and every link between them
// with measured figures, sends a chat message and waits for the streamed answer. Screenshots
// go to COHORT_ARTIFACTS (printed). Exits non-zero with the reason on any failure.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const url = process.env.COHORT_URL;
const artifacts = process.env.COHORT_ARTIFACTS;
const expectNodes = Number(process.env.COHORT_EXPECT_NODES || 3);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
assert.ok(url && artifacts, 'set COHORT_URL and COHORT_ARTIFACTS');
mkdirSync(artifacts, { recursive: true });

const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  const external = [];
  page.on('request', r => { if (!r.url().startsWith(url)) external.push(r.url()); });

  // A browser asks for text/html at /: it gets the dashboard, not Ollama's banner.
  await page.goto(url + '/');
  await page.waitForFunction(n => document.querySelectorAll('#nodes .node').length === n,
                             expectNodes, { timeout: 20000 });
  const names = await page.$$eval('#nodes .node', els => els.map(e => e.dataset.name));
  console.log('nodes:', names.join(', '));
  assert.equal(new Set(names).size, expectNodes, 'node names are distinct');
  const links = await page.$$eval('#links .link text', els => els.map(e => e.textContent));
  console.log('links:', links.join(' | '));
  assert.equal(links.length, (expectNodes * (expectNodes - 1)) / 2, 'a link between every pair');
  for (const label of links) assert.match(label, /(µs|ms) · [\d.]+ [MG]B\/s/, 'measured link label');
  const rows = await page.$$eval('#placement-table tr[data-name]', els => els.length);
  assert.equal(rows, expectNodes, 'placement lists every node');
  const shot1 = join(artifacts, 'dashboard-cluster.png');
  await page.screenshot({ path: shot1, fullPage: true });
  console.log('screenshot:', shot1);

  await page.fill('#chat-input', 'Once upon a time');
  await page.click('#chat-send');
  await page.waitForSelector('#chat-output .answer[data-done="true"]', { timeout: 60000 });
  const answer = await page.textContent('#chat-output .answer');
  const meta = await page.textContent('#chat-meta');
  console.log('answer:', JSON.stringify(answer), '|', meta);
  assert.ok(answer.trim().length > 0, 'the answer has text');
  assert.doesNotMatch(answer, /\[error:/, 'the answer is not an error');
  const pieces = Number(/done: (\d+) pieces/.exec(meta)?.[1] || 0);
  assert.ok(pieces > 1, `the answer streamed in pieces (${pieces})`);
  // The next poll shows the request in the live figures.
  await page.waitForFunction(() => Number(document.getElementById('stat-requests').textContent) >= 1,
                             null, { timeout: 5000 });
  const shot2 = join(artifacts, 'dashboard-chat.png');
  await page.screenshot({ path: shot2, fullPage: true });
  console.log('screenshot:', shot2);
  assert.deepEqual(errors, [], 'no script errors');
  assert.deepEqual(external, [], 'nothing fetched from elsewhere');
  console.log('dashboard: ok');
} finally {
  await browser.close();
}
