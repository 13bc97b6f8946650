// The portal in a real browser: server rendering, hydration, filters, language switch.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { startPortal, launchBrowser, watchErrors, waitForHydration, signIn } from './portal.mjs';

// Rows on one page of the catalog list (`PAGE_SIZE` in frontend/src/api.rs).
const PAGE_SIZE = 50;
const SHOTS = new URL('./screenshots/', import.meta.url).pathname;
mkdirSync(SHOTS, { recursive: true });

let portal;
let browser;

before(async () => {
  portal = await startPortal();
  browser = await launchBrowser();
  // Every page needs a session: sign in once through the development sign-in.
  await signIn(browser.context, portal.url, 'Rui Researcher');
});

after(async () => {
  await browser?.close();
  await portal?.stop();
});

test('the overview shows the layers-by-sites matrix of the demo catalog and hydrates cleanly', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const res = await page.goto(`${portal.url}/`, { waitUntil: 'load' });
  assert.equal(res.status(), 200);
  await waitForHydration(page);

  const rows = await page.locator('table.matrix tbody tr').count();
  assert.ok(rows >= 15, `expected every layer and capability as a row, got ${rows}`);
  const headers = await page.locator('table.matrix thead th').allInnerTexts();
  assert.ok(headers.some((h) => /franca/i.test(h)), `no Franca column in ${headers}`);
  const validated = Number(await page.locator('.total-card.state-validated .total-n').innerText());
  assert.ok(validated > 0, 'the demo catalog has validated items');
  await page.screenshot({ path: `${SHOTS}overview.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a filter click after hydration changes the list without a page navigation, and a row opens its item without one', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
  await waitForHydration(page);
  const before = Number(await page.locator('.result-count').getAttribute('data-total'));

  // A full navigation would discard this marker; a client-side route change keeps it.
  await page.evaluate(() => {
    window.__sameDocument = true;
  });
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations += 1;
  });

  await page.locator('[data-filter="state"] a[data-value="validated"]').click();
  await page.waitForURL(/state=validated/);
  await page.waitForFunction(
    (n) => Number(document.querySelector('.result-count')?.getAttribute('data-total')) !== n,
    before,
  );

  const after = Number(await page.locator('.result-count').getAttribute('data-total'));
  assert.ok(after > 0 && after < before, `validated ${after} of ${before}`);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was reloaded');
  const badges = await page.locator('table.items tbody .badge.state-validated').count();
  const rows = await page.locator('table.items tbody tr').count();
  assert.equal(rows, Math.min(after, PAGE_SIZE));
  assert.equal(badges, rows, 'every row listed is validated');
  assert.ok(navigations <= 1, `history navigations only, got ${navigations}`);
  await page.screenshot({ path: `${SHOTS}catalog-validated.png`, fullPage: true });

  // A row's link (written in the rows' HTML, not a view) is followed without a reload too.
  const first = page.locator('table.items tbody tr a.item-name').first();
  const href = await first.getAttribute('href');
  await first.click();
  await page.waitForURL((url) => url.pathname === href);
  await page.locator('h1').first().waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the item link reloaded the page');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the catalog list pages through every item, keeping the filters, and a filter click goes back to the first page', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
  await waitForHydration(page);
  const total = Number(await page.locator('.result-count').getAttribute('data-total'));
  assert.ok(total > PAGE_SIZE, `the demo catalog fills more than one page: ${total}`);
  const pages = Math.ceil(total / PAGE_SIZE);
  const ids = async () => page.locator('table.items tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.id));
  const first = await ids();
  assert.equal(first.length, PAGE_SIZE);
  assert.equal(await page.locator('.pager .pager-prev').count(), 0, 'no previous page on the first');

  const seen = new Set(first);
  for (let n = 2; n <= pages; n += 1) {
    await page.locator('.pager .pager-next').click();
    await page.waitForURL(new RegExp(`page=${n}`));
    await page.waitForSelector(`.result-count[data-page="${n}"]`);
    const rows = await ids();
    for (const id of rows) {
      assert.ok(!seen.has(id), `${id} listed on two pages`);
      seen.add(id);
    }
  }
  assert.equal(seen.size, total, 'every item is on exactly one page');
  assert.equal(await page.locator('.pager .pager-next').count(), 0, 'no next page on the last');
  assert.match(await page.locator('.pager-position').innerText(), new RegExp(`${pages}\\D+${pages}`));
  await page.screenshot({ path: `${SHOTS}catalog-last-page.png`, fullPage: true });

  await page.locator('.pager .pager-prev').click();
  // The first page's link carries no `page`.
  await page.waitForURL((u) => (u.searchParams.get('page') ?? '1') === String(pages - 1));
  await page.waitForSelector(`.result-count[data-page="${pages - 1}"]`);

  // A filter chosen on a later page lists its matches from the first.
  await page.locator('[data-filter="state"] a[data-value="declared"]').click();
  await page.waitForURL((u) => u.searchParams.get('state') === 'declared' && !u.searchParams.has('page'));
  await page.waitForSelector('.result-count[data-page="1"]');
  const declared = await page.locator('table.items tbody .badge.state-declared').count();
  assert.equal(declared, await page.locator('table.items tbody tr').count());

  // A page past the end, from an old link, shows the last page rather than nothing.
  const res = await page.goto(`${portal.url}/catalog?page=99999999999999999999`, { waitUntil: 'load' });
  assert.equal(res.status(), 200);
  assert.equal(await page.locator('.result-count').getAttribute('data-page'), '1', 'not a number: the first page');
  await page.goto(`${portal.url}/catalog?page=${pages + 5}`, { waitUntil: 'load' });
  assert.equal(await page.locator('.result-count').getAttribute('data-page'), String(pages));
  assert.ok((await page.locator('table.items tbody tr').count()) > 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the language switch turns the interface to Portuguese and remembers it', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  const firstBadge = page.locator('table.items tbody tr .badge').first();
  assert.match(await firstBadge.innerText(), /^(Validated|Declared|Desired)$/);
  await page.locator('.lang-switch a[lang="pt-BR"]').click();
  await page.waitForFunction(() => document.documentElement.lang === 'pt-BR');
  assert.match(await page.locator('nav.nav').innerText(), /Catálogo/);
  // The rows are written again in the new language, without a reload.
  await page.waitForFunction(() =>
    /^(Validado|Declarado|Desejado)$/.test(
      document.querySelector('table.items tbody tr .badge')?.textContent ?? '',
    ),
  );

  await page.reload({ waitUntil: 'load' });
  assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR', 'the choice survives a reload');
  assert.match(await page.locator('h1').first().innerText(), /Catálogo/);
  await page.screenshot({ path: `${SHOTS}catalog-pt.png`, fullPage: true });
  await page.locator('.lang-switch a[lang="en"]').click();
  await page.close();
});

test('filters work as plain links when JavaScript is off', async () => {
  const nojs = await launchBrowser({ javaScriptEnabled: false });
  try {
    await signIn(nojs.context, portal.url, 'Rui Researcher');
    const page = await nojs.context.newPage();
    await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
    const first = await page.locator('table.items tbody tr').first().getAttribute('data-id');
    await page.locator('.pager .pager-next').click();
    await page.waitForURL(/page=2/);
    assert.equal(await page.locator('.result-count').getAttribute('data-page'), '2');
    assert.notEqual(await page.locator('table.items tbody tr').first().getAttribute('data-id'), first);
    await page.locator('[data-filter="state"] a[data-value="desired"]').click();
    await page.waitForURL(/state=desired/);
    const rows = await page.locator('table.items tbody tr').count();
    const desired = await page.locator('table.items tbody .badge.state-desired').count();
    assert.ok(rows > 0);
    assert.equal(desired, rows);

    await page.fill('main input[name="q"]', 'linstor');
    await page.press('main input[name="q"]', 'Enter');
    await page.waitForURL(/q=linstor/);
    assert.match(page.url(), /state=desired/, 'the search keeps the other filters');
    const names = await page.locator('table.items tbody tr').allInnerTexts();
    assert.ok(names.length > 0 && names.every((n) => /linstor|drbd/i.test(n)), names.join('\n'));

    await page.locator('.lang-switch a[lang="pt-BR"]').click();
    await page.waitForURL(/lang=pt-BR/);
    assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR');
    assert.match(await page.locator('h1').first().innerText(), /Catálogo/);
    await page.goto(`${portal.url}/decisions`, { waitUntil: 'load' });
    assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR', 'the language link set the cookie');
  } finally {
    await nojs.close();
  }
});

test('an item page shows state, evidence and dependencies', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/catalog?q=clustermesh`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.locator('table.items a.item-name').first().click();
  await page.waitForURL(/\/items\//);
  await page.waitForSelector('.page-head h1');
  assert.ok(await page.locator('.page-head .badge.state-desired').count() >= 1);
  const deps = await page.locator('ul.refs').first().innerText();
  assert.match(deps, /Cilium/i, 'ClusterMesh depends on Cilium on both sites');
  await page.screenshot({ path: `${SHOTS}item.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the header search finds items, decisions and requests by kind, without regard to case or accents', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/`, { waitUntil: 'load' });
  await waitForHydration(page);
  // "replicacao" finds "Replicação" and friends; the header box sends a plain GET.
  await page.locator('#header-q').fill('REPLICACAO');
  await page.locator('#header-q').press('Enter');
  await page.waitForURL(/\/search\?q=REPLICACAO/);
  await page.waitForSelector('.result-count');
  const kinds = await page.locator('.search-group').evaluateAll((gs) => gs.map((g) => g.dataset.kind));
  assert.ok(kinds.length >= 1, `some group: ${kinds}`);
  const hits = (await page.locator('.search-hits').allInnerTexts()).join('\n');
  assert.match(hits, /replica/i, hits);
  // A GPU query reaches the self-service template Rui may use.
  await page.locator('#search-q').fill('gpu');
  await page.locator('.search-form button').click();
  await page.waitForURL(/\/search\?q=gpu/);
  await page.waitForSelector('.search-templates');
  await page.locator('.search-templates a').first().click();
  await page.waitForURL(/\/self-service\/gpu-workspace/);
  // Nothing typed: the page says what is searched.
  await page.goto(`${portal.url}/search`, { waitUntil: 'load' });
  assert.match(await page.locator('main').innerText(), /case|maiúsculas/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a site has a page of its own, reached from the sites page and from an item', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/sites`, { waitUntil: 'load' });
  await waitForHydration(page);
  const name = await page.locator('.site-card h2 a').first().innerText();
  await page.locator('.site-card h2 a').first().click();
  await page.waitForURL(/\/sites\/[a-z0-9-]+$/);
  await page.waitForSelector('.page-head h1');
  assert.equal(await page.locator('.page-head h1').innerText(), name);
  assert.equal(await page.locator('.site-card').count(), 1, 'the one site');
  assert.ok((await page.locator('table.items tbody tr').count()) > 0, 'its items are listed');
  assert.ok((await page.locator('table.hosts tbody tr').count()) > 0, 'its hosts are listed');
  await page.screenshot({ path: `${SHOTS}site.png`, fullPage: true });
  await page.locator('table.items a.item-name').first().click();
  await page.waitForURL(/\/items\//);
  await page.locator('a.site-tag').first().click();
  await page.waitForURL(/\/sites\/[a-z0-9-]+$/);
  await page.waitForSelector('.page-head h1');
  const missing = await page.goto(`${portal.url}/sites/no-such-site`, { waitUntil: 'load' });
  assert.equal(missing.status(), 404);
  assert.deepEqual(errors.filter((e) => !/status of 404/.test(e)), []);
  await page.close();
});

test('decisions link their ADRs to where the catalog says ADRs are read, and a layer without components shows no empty card', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/decisions`, { waitUntil: 'load' });
  await waitForHydration(page);
  const href = await page.locator('td.adr a', { hasText: 'ADR-003' }).first().getAttribute('href');
  assert.equal(href, 'https://git.example.org/cpps/devops/-/blob/main/docs/adr/ADR-003.md');
  await page.goto(`${portal.url}/layers/l8b`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.equal(await page.locator('ul.components:empty').count(), 0, 'no empty list of components');
  assert.deepEqual(errors, []);
  await page.close();
});

test('without a session a page leads to the development sign-in; the admin sees their name and role, and signs out', async () => {
  const own = await launchBrowser();
  try {
    const page = await own.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${portal.url}/decisions`, { waitUntil: 'load' });
    assert.match(page.url(), /\/auth\/login\?next=%2Fdecisions$/);
    assert.match(await page.locator('.dev-banner').innerText(), /development sign-in/i);

    await page.locator('button.demo-user', { hasText: 'Ada Admin' }).click();
    await page.waitForURL(`${portal.url}/decisions`);
    await waitForHydration(page);
    assert.equal(await page.locator('.user-menu .user-name').innerText(), 'Ada Admin');
    assert.equal(await page.locator('.user-menu .role-admin').count(), 1);
    assert.equal(await page.locator('.user-menu .dev-banner').count(), 1);

    await page.locator('.user-menu form.logout button').click();
    await page.waitForURL(/\/auth\/login$/);
    assert.equal(await page.locator('button.demo-user').count(), 2);
    await page.goto(`${portal.url}/`, { waitUntil: 'load' });
    assert.match(page.url(), /\/auth\/login\?next=%2F$/, 'the session is gone');
    assert.deepEqual(errors, []);
  } finally {
    await own.close();
  }
});

test('a script planted in a page does not run: the policy allows only the scripts carrying its nonce', async () => {
  const page = await browser.context.newPage();
  const violations = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.deepEqual(violations, [], 'the page\'s own scripts are allowed');

  // What a catalog file or a form value could smuggle in, if any rendering let it through:
  // an inline script element and a javascript: link, added as the page's own markup.
  await page.evaluate(() => {
    window.__planted = 0;
    const script = document.createElement('script');
    script.textContent = 'window.__planted += 1;';
    document.body.append(script);
    const link = document.createElement('a');
    link.id = 'planted-link';
    link.href = 'javascript:window.__planted += 10';
    link.textContent = 'planted';
    document.body.append(link);
  });
  await page.locator('#planted-link').click();
  await page.waitForTimeout(200);

  assert.equal(await page.evaluate(() => window.__planted), 0);
  assert.ok(violations.length >= 2, `each planted script is refused and reported: ${violations}`);
  await page.close();
});
