// The roadmap, the dependency graph and the findings in a real browser, on the demo catalog.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { startPortal, launchBrowser, watchErrors, waitForHydration, signIn } from './portal.mjs';

const SHOTS = new URL('./screenshots/', import.meta.url).pathname;
mkdirSync(SHOTS, { recursive: true });

let portal;
let browser;

before(async () => {
  portal = await startPortal();
  browser = await launchBrowser();
  await signIn(browser.context, portal.url, 'Ada Admin');
});

after(async () => {
  await browser?.close();
  await portal?.stop();
});

test('the roadmap shows phases with progress and what blocks ClusterMesh and place_count', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const res = await page.goto(`${portal.url}/roadmap`, { waitUntil: 'load' });
  assert.equal(res.status(), 200);
  await waitForHydration(page);

  const phases = await page.locator('article.phase h3').allInnerTexts();
  assert.ok(phases.includes('MVP'), `phases: ${phases}`);
  assert.ok((await page.locator('article.phase .progress-bar').count()) >= 3);

  const mesh = page.locator('li.rm-item', { has: page.locator('a[href="/items/clustermesh-applicationset"]') });
  assert.ok((await mesh.locator('.status-blocked').count()) === 1, 'ClusterMesh is blocked');
  const blockers = await mesh.locator('.blocked-by a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.ok(blockers.includes('/items/k3s-sp-cilium'), `blockers: ${blockers}`);
  assert.ok(blockers.includes('/items/franca-cilium-migration'), `blockers: ${blockers}`);

  const placeCount = page.locator('#task-l1-sp-ssd-place-count-3');
  assert.match(await placeCount.innerText(), /pve-ippri-34/);
  assert.equal(await placeCount.locator('.status-blocked').count(), 1);
  // Critical tasks lead the list.
  const first = await page.locator('.rm-tasks tbody tr').first().locator('.badge.priority').innerText();
  assert.match(first, /critical|crítica/i);

  await page.screenshot({ path: `${SHOTS}roadmap.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the graph highlights the critical path, a click on a node makes it the target, and the path opens its items', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/roadmap/graph?to=clustermesh-applicationset`, { waitUntil: 'load' });
  await waitForHydration(page);

  const nodes = page.locator('.graph-wrap svg a.node');
  assert.ok((await nodes.count()) > 10, 'the graph has nodes');
  const onPath = await page.locator('.graph-wrap svg a.node.path').evaluateAll((as) => as.map((a) => a.getAttribute('data-id')));
  assert.ok(onPath.includes('clustermesh-applicationset'), `path: ${onPath}`);
  assert.ok(onPath.length >= 2, `path: ${onPath}`);
  assert.ok((await page.locator('.graph-wrap svg path.edge.path').count()) >= 1);
  await page.screenshot({ path: `${SHOTS}roadmap-graph.png`, fullPage: true });

  await page.locator('.graph-wrap svg a.node[data-id="k3s-sp-cilium"]').click();
  await page.waitForURL(`${portal.url}/roadmap/graph?to=k3s-sp-cilium`);
  await page.waitForFunction(() => document.querySelector('#graph-to')?.value === 'k3s-sp-cilium');
  const target = await page.locator('.graph-wrap svg a.node.path').evaluateAll((as) => as.map((a) => a.getAttribute('data-id')));
  assert.ok(target.includes('k3s-sp-cilium'), `path: ${target}`);
  assert.ok(!target.includes('clustermesh-applicationset'), `the old target left the path: ${target}`);
  await page.locator('p.critical-path a[href="/items/k3s-sp-cilium"]').click();
  await page.waitForURL(`${portal.url}/items/k3s-sp-cilium`);
  await page.waitForSelector('h1');
  assert.match(await page.locator('h1').innerText(), /K3s SP/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the graph and the roadmap read without JavaScript', async () => {
  const noJs = await launchBrowser({ javaScriptEnabled: false });
  try {
    await signIn(noJs.context, portal.url, 'Ada Admin');
    const page = await noJs.context.newPage();
    await page.goto(`${portal.url}/roadmap/graph`, { waitUntil: 'load' });
    // A node is a plain link that makes it the target.
    await page.locator('.graph-wrap svg a.node[data-id="k3s-sp-cilium"]').click();
    await page.waitForURL(/to=k3s-sp-cilium/);
    assert.ok((await page.locator('.graph-wrap svg a.node.path').count()) >= 1);
    // The form picks the item by a plain GET.
    await page.selectOption('#graph-to', 'clustermesh-applicationset');
    await page.locator('.graph-form button').click();
    await page.waitForURL(/to=clustermesh-applicationset/);
    assert.ok((await page.locator('.graph-wrap svg a.node.path').count()) >= 2);
    await page.goto(`${portal.url}/roadmap`, { waitUntil: 'load' });
    assert.ok((await page.locator('li.rm-item').count()) > 20);
  } finally {
    await noJs.close();
  }
});

test('the roadmap draws the burn-up of the demo history and an item shows its state changes', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/roadmap`, { waitUntil: 'load' });
  await waitForHydration(page);

  const chart = page.locator('#burnup svg[role="img"]');
  assert.equal(await chart.count(), 1, 'the burn-up is drawn');
  for (const band of ['validated', 'declared', 'desired']) {
    assert.equal(await chart.locator(`path.b-${band}`).count(), 1, `${band} band`);
  }
  assert.ok((await chart.locator('circle').count()) >= 6, 'a point per revision');
  assert.match(await chart.locator('desc').textContent(), /validated|validados/);
  assert.ok((await page.locator('#burnup details table tbody tr').count()) >= 6, 'the table fallback');
  await page.locator('#burnup').screenshot({ path: `${SHOTS}roadmap-burnup.png` });

  await page.goto(`${portal.url}/items/linstor-franca`, { waitUntil: 'load' });
  await waitForHydration(page);
  const entries = page.locator('#history li.timeline-entry');
  assert.equal(await entries.count(), 3, 'appeared, declared, validated');
  assert.match(await entries.last().innerText(), /LINSTOR Franca validated/);
  assert.match(await entries.last().locator('code').innerText(), /^[0-9a-f]{8}$/);
  await page.locator('#history').screenshot({ path: `${SHOTS}item-history.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the burn-up and the item history read without JavaScript', async () => {
  const noJs = await launchBrowser({ javaScriptEnabled: false });
  try {
    await signIn(noJs.context, portal.url, 'Ada Admin');
    const page = await noJs.context.newPage();
    await page.goto(`${portal.url}/roadmap`, { waitUntil: 'load' });
    assert.equal(await page.locator('#burnup svg path.b-validated').count(), 1);
    await page.goto(`${portal.url}/items/proxmox-clusters`, { waitUntil: 'load' });
    assert.equal(await page.locator('#history li.timeline-entry').count(), 2);
  } finally {
    await noJs.close();
  }
});

test('admins see the findings, with traefik-sp HA flagged as declared but not real', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/findings`, { waitUntil: 'load' });
  await waitForHydration(page);

  const ha = page.locator('li.finding', { has: page.locator('a[href="/items/traefik-sp-ha"]') });
  assert.equal(await ha.count(), 1);
  assert.match(await ha.innerText(), /Pulumi\.sp\.yaml/);
  assert.equal(await ha.locator('.finding-code').innerText(), 'declared-not-real');
  assert.ok((await page.locator('nav a[href="/findings"]').count()) === 1, 'the header links the findings for admins');
  await page.screenshot({ path: `${SHOTS}findings.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});
