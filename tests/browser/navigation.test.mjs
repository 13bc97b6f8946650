// Every top-navigation link and every breadcrumb, clicked from every page, as a researcher and
// as an admin: each click lands on a page that shows no error box, no server function answers
// 4xx/5xx and the console stays free of errors and Leptos warnings.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startPortal,
  launchBrowser,
  waitForHydration,
  signIn,
  watchPortal,
  errorBoxes,
  discoverPages,
  pagesFor,
} from './portal.mjs';

let portal;
const browsers = {};
/** Pages with an id in their address, found by reading the portal as a person would. */
const found = {};

before(async () => {
  portal = await startPortal();
  browsers.researcher = await launchBrowser();
  browsers.admin = await launchBrowser();
  await signIn(browsers.researcher.context, portal.url, 'Rui Researcher');
  await signIn(browsers.admin.context, portal.url, 'Ada Admin');

  Object.assign(found, await discoverPages(browsers.researcher.context, portal.url));
});

after(async () => {
  for (const b of Object.values(browsers)) await b?.close();
  await portal?.stop();
});

/** The header's links (brand and navigation) and the page's breadcrumbs, in page order. */
const LINKS = 'header.topbar a.brand, header.topbar nav a, nav.crumbs a';

async function clickThrough(role) {
  const page = await browsers[role].context.newPage();
  const watch = watchPortal(page);
  const problems = [];
  let clicks = 0;
  for (const from of pagesFor(role, found)) {
    const res = await page.goto(`${portal.url}${from}`, { waitUntil: 'load' });
    assert.ok(res.ok(), `${from} answered ${res.status()}`);
    await waitForHydration(page);
    await watch.settle();
    const hrefs = await page.locator(LINKS).evaluateAll((els) => els.map((a) => a.getAttribute('href')));
    assert.ok(hrefs.length >= 6, `${from}: only ${hrefs.length} links in the header`);
    for (let i = 0; i < hrefs.length; i += 1) {
      const before = watch.errors.length;
      await page.locator(LINKS).nth(i).click();
      await page.waitForURL(`${portal.url}${hrefs[i]}`, { waitUntil: 'commit' });
      await watch.settle();
      clicks += 1;
      const boxes = await errorBoxes(page);
      const heading = await page.locator('main h1').count();
      const fresh = watch.errors.splice(before);
      if (boxes.length || !heading || fresh.length) {
        problems.push(
          `${from} → ${hrefs[i]}: ${[...boxes.map((b) => `error box: ${b}`), ...(heading ? [] : ['no heading']), ...fresh].join('; ')}`,
        );
      }
      // Back to the page under test the way a reader goes back (a link to the page itself
      // may leave no history entry: then it is loaded again).
      if (hrefs[i] === from) {
        await page.goto(`${portal.url}${from}`, { waitUntil: 'load' });
        await waitForHydration(page);
      } else {
        await page.goBack({ waitUntil: 'commit' });
        await page.waitForURL(`${portal.url}${from}`, { waitUntil: 'commit' });
      }
      await watch.settle();
      const back = watch.errors.splice(before);
      if (back.length) problems.push(`${hrefs[i]} → back to ${from}: ${back.join('; ')}`);
    }
  }
  await page.close();
  assert.ok(clicks > 50, `only ${clicks} clicks`);
  assert.deepEqual(problems, [], `${problems.length} of ${clicks} clicks went wrong`);
}

test('every header link and breadcrumb works from every page for a researcher', async () => {
  await clickThrough('researcher');
});

test('every header link and breadcrumb works from every page for an admin', async () => {
  await clickThrough('admin');
});

/** Runs `body` on a page of a 390 px wide browser signed in as a researcher; meanwhile the
 * console must stay free of errors and no server function may fail (`watchPortal`). */
async function onAPhone(body) {
  const phone = await launchBrowser({ viewport: { width: 390, height: 844 } });
  try {
    await signIn(phone.context, portal.url, 'Rui Researcher');
    const page = await phone.context.newPage();
    const watch = watchPortal(page);
    await body(page, watch);
    assert.deepEqual(watch.errors, []);
    await page.close();
  } finally {
    await phone.close();
  }
}

test('at 390 px an item\'s decisions stack as cards, every field on screen under its column\'s name', async () => {
  await onAPhone(async (page, watch) => {
    await page.goto(`${portal.url}/catalog?q=proxmox-clusters`, { waitUntil: 'load' });
    await waitForHydration(page);
    await page.getByRole('link', { name: 'Clusters Proxmox (1 por site)' }).click();
    await page.waitForURL(`${portal.url}/items/proxmox-clusters`, { waitUntil: 'commit' });
    await watch.settle();

    const table = page.locator('table.decisions');
    const headers = await table.locator('thead th').allTextContents();
    assert.equal(headers.length, 5);
    // The header row is kept for screen readers, not shown.
    const head = await table.locator('thead').boundingBox();
    assert.ok(head.height <= 1, `the header row is ${head.height} px tall`);
    const wrap = await table.evaluate((t) => ({ scroll: t.parentElement.scrollWidth, client: t.parentElement.clientWidth }));
    assert.ok(wrap.scroll <= wrap.client, `the table scrolls sideways: ${wrap.scroll} > ${wrap.client}`);
    const cells = table.locator('tbody tr').first().locator('td');
    assert.equal(await cells.count(), headers.length);
    for (let k = 0; k < headers.length; k += 1) {
      const cell = cells.nth(k);
      const box = await cell.boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `${headers[k]} lies at ${box.x}..${box.x + box.width}`);
      const label = await cell.evaluate((td) => ({ name: td.dataset.label, shown: getComputedStyle(td, '::before').display }));
      assert.deepEqual(label, { name: headers[k], shown: 'inline-block' });
    }
  });
});

test('at 390 px the header folds behind a Menu button and scrolls away with the page', async () => {
  await onAPhone(async (page, watch) => {
    await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
    await waitForHydration(page);
    const header = await page.locator('header.topbar').boundingBox();
    assert.ok(header.height < 70, `the folded header is ${header.height} px tall`);
    assert.equal(await page.locator('header.topbar nav').isVisible(), false, 'the navigation is folded');
    assert.equal(await page.locator('header.topbar').evaluate((h) => getComputedStyle(h).position), 'static');
    // The results start on the first screen: the filters do not fill it.
    const count = await page.locator('.result-count').boundingBox();
    assert.ok(count.y < 844, `the result count starts at ${count.y} px`);

    const toggle = page.locator('button.menu-toggle');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    await page.locator('header.topbar nav a[href="/sites"]').click();
    await page.waitForURL(`${portal.url}/sites`, { waitUntil: 'commit' });
    await watch.settle();
    // Going to another page folds the menu again.
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await page.locator('header.topbar nav').isVisible(), false);
  });
});

test('at 390 px a filter group scrolls to its active chip, on opening the list and after going back', async () => {
  await onAPhone(async (page, watch) => {
    /** Whether the active chip of the layer group lies in the group's visible width, right of
     * the group's name, which stays at the left edge while the chips scroll under it. */
    const activeLayer = () => page.locator('[data-filter=layer]').evaluate((group) => {
      const chip = group.querySelector('a[aria-current]');
      const g = group.getBoundingClientRect();
      const label = group.querySelector('.filter-label').getBoundingClientRect();
      const c = chip.getBoundingClientRect();
      return {
        value: chip.dataset.value ?? null,
        named: label.left >= g.left && label.left - g.left < 1,
        shown: c.left >= label.right && c.right <= g.right,
        scrolls: group.scrollWidth > group.clientWidth,
      };
    });

    // Opened with the last layer chosen: its chip is on screen, and the page itself did not move.
    await page.goto(`${portal.url}/catalog?layer=l8`, { waitUntil: 'load' });
    await waitForHydration(page);
    assert.deepEqual(await activeLayer(), { value: 'l8', named: true, shown: true, scrolls: true });
    assert.equal(await page.evaluate(() => window.scrollY), 0);

    // Swiped back to the first layers, one is chosen, then the browser's back button: the list
    // is by the last layer again, and the group brings its chip back into view.
    await page.locator('[data-filter=layer]').evaluate((group) => { group.scrollLeft = 0; });
    await page.locator('[data-filter=layer] a[data-value=l0]').click();
    await page.waitForURL(`${portal.url}/catalog?layer=l0`, { waitUntil: 'commit' });
    await watch.settle();
    assert.deepEqual(await activeLayer(), { value: 'l0', named: true, shown: true, scrolls: true });
    await page.goBack({ waitUntil: 'commit' });
    await page.waitForURL(`${portal.url}/catalog?layer=l8`, { waitUntil: 'commit' });
    await watch.settle();
    await page.waitForFunction(() => document.querySelector('[data-filter=layer] a[data-value=l8]')?.getAttribute('aria-current') === 'true');
    assert.deepEqual(await activeLayer(), { value: 'l8', named: true, shown: true, scrolls: true });
    // The list followed: every row shown is on that layer or one of its sublayers (l8a…).
    const layers = await page.locator('tr.item-row td:nth-child(3) a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    assert.ok(layers.length > 0);
    for (const href of layers) assert.match(href, /^\/layers\/l8[a-z]?$/);
  });
});

test('at 390 px in Portuguese each catalog row is a card whose cells all lie on screen, and its name opens the item', async () => {
  await onAPhone(async (page, watch) => {
    await page.context().addCookies([{ name: 'mirante_lang', value: 'pt-BR', url: portal.url }]);
    await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
    await waitForHydration(page);

    const table = page.locator('table.items');
    assert.deepEqual(await table.locator('thead th').allTextContents(), ['Item', 'Estado', 'Camada', 'Sites']);
    // The column names are kept for screen readers, not shown.
    const head = await table.locator('thead').boundingBox();
    assert.ok(head.height <= 1, `the header row is ${head.height} px tall`);
    const wrap = await table.evaluate((t) => ({ scroll: t.parentElement.scrollWidth, client: t.parentElement.clientWidth }));
    assert.ok(wrap.scroll <= wrap.client, `the table scrolls sideways: ${wrap.scroll} > ${wrap.client}`);
    const cells = await table.locator('tbody td').evaluateAll((tds) => tds.map((td) => {
      const box = td.getBoundingClientRect();
      return { text: td.textContent, left: box.left, right: box.right };
    }));
    assert.ok(cells.length >= 4 * 10, `${cells.length} cells`);
    for (const cell of cells) {
      assert.ok(cell.left >= 0 && cell.right <= 390, `"${cell.text}" lies at ${cell.left}..${cell.right}`);
    }

    const first = table.locator('tr.item-row').first();
    const id = await first.getAttribute('data-id');
    await first.locator('a.item-name').click();
    await page.waitForURL(`${portal.url}/items/${id}`, { waitUntil: 'commit' });
    await watch.settle();
    assert.equal(await page.locator('html').getAttribute('lang'), 'pt-BR');
  });
});
