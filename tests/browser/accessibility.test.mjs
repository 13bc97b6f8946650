// axe-core on every page of the web UI, as a researcher and as an admin, in English and in
// Portuguese, after hydration: no critical and no serious violation. Also the keyboard's way in:
// a skip link first, and focus on the main heading after a client-side navigation.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  startPortal,
  launchBrowser,
  waitForHydration,
  signIn,
  watchPortal,
  discoverPages,
  pagesFor,
} from './portal.mjs';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let portal;
const browsers = {};
const found = {};

before(async () => {
  portal = await startPortal();
  browsers.researcher = await launchBrowser();
  browsers.admin = await launchBrowser();
  browsers.anonymous = await launchBrowser();
  await signIn(browsers.researcher.context, portal.url, 'Rui Researcher');
  await signIn(browsers.admin.context, portal.url, 'Ada Admin');
  Object.assign(found, await discoverPages(browsers.researcher.context, portal.url));
});

after(async () => {
  for (const b of Object.values(browsers)) await b?.close();
  await portal?.stop();
});

/** The critical and serious violations axe finds on the page, one line each. */
async function violations(page) {
  // Evaluated through the DevTools protocol, as an extension would: the page's policy rightly
  // refuses an inline script tag, even one added by the test.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  assert.ok(result.passes.length > 10, `axe checked little on ${page.url()}`);
  return result.violations
    .filter((v) => v.impact === 'critical' || v.impact === 'serious')
    .map((v) => `${v.impact} ${v.id} (${v.nodes.length}×): ${v.help} — e.g. ${v.nodes[0].target.join(' ')}`);
}

async function audit(role, lang, paths) {
  const { context } = browsers[role];
  await context.addCookies([{ name: 'mirante_lang', value: lang, url: portal.url }]);
  const page = await context.newPage();
  const watch = watchPortal(page);
  const problems = [];
  for (const path of paths) {
    const res = await page.goto(`${portal.url}${path}`, { waitUntil: 'load' });
    assert.ok(res.ok(), `${path} answered ${res.status()}`);
    assert.equal(await page.getAttribute('html', 'lang'), lang, `${path} is not in ${lang}`);
    if (await page.locator('script[type="module"]').count()) await waitForHydration(page);
    await watch.settle();
    for (const v of await violations(page)) problems.push(`${path}: ${v}`);
    // Both languages run left to right: no Unicode isolation marks around names and numbers.
    const marks = await page.evaluate(() => (document.body.innerText.match(/[\u2068\u2069]/g) ?? []).length);
    if (marks) problems.push(`${path}: ${marks} bidi isolation marks in the text`);
  }
  await page.close();
  assert.deepEqual(problems, [], `${problems.length} serious or critical violations`);
  assert.deepEqual(watch.errors, []);
}

for (const lang of ['en', 'pt-BR']) {
  test(`axe finds nothing serious on any page a researcher sees, in ${lang}`, async () => {
    await audit('researcher', lang, [...pagesFor('researcher', found), '/profile']);
  });

  test(`axe finds nothing serious on any page an admin sees, in ${lang}`, async () => {
    await audit('admin', lang, [...pagesFor('admin', found), '/profile']);
  });

  test(`axe finds nothing serious on the sign-in page, in ${lang}`, async () => {
    await audit('anonymous', lang, ['/auth/login']);
  });
}

test('the first Tab reaches a skip link that moves to the main content', async () => {
  const page = await browsers.researcher.context.newPage();
  await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => ({
    cls: document.activeElement.className,
    href: document.activeElement.getAttribute('href'),
    visible: document.activeElement.getBoundingClientRect().top >= 0,
  }));
  assert.deepEqual(first, { cls: 'skip-link', href: '#main', visible: true });
  await page.keyboard.press('Enter');
  // The next Tab lands inside the main content, not in the header.
  await page.keyboard.press('Tab');
  const inMain = await page.evaluate(() => !!document.activeElement.closest('main'));
  assert.ok(inMain, 'after the skip link, Tab goes into the main content');
  await page.close();
});

test('after a client-side navigation the focus is on the new page’s main heading', async () => {
  const page = await browsers.researcher.context.newPage();
  const watch = watchPortal(page);
  await page.goto(`${portal.url}/`, { waitUntil: 'load' });
  await waitForHydration(page);
  // The header's Catalog link, an item of the list, then the header's Sites link.
  for (const href of ['/catalog', found.item, '/sites']) {
    await page.evaluate(() => {
      window.__sameDocument = true;
    });
    await page.locator(`a[href="${href}"]`).first().click();
    await page.waitForURL(`${portal.url}${href}`);
    await watch.settle();
    await page.waitForFunction(() => document.activeElement?.matches('main h1'), null, { timeout: 5000 });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, `${href} reloaded the page`);
    const heading = await page.locator('main h1').first().innerText();
    assert.ok(heading.length > 0);
  }
  assert.deepEqual(watch.errors, []);
  await page.close();
});

test('a filter chip chosen from the keyboard keeps the focus and becomes the active one', async () => {
  const page = await browsers.researcher.context.newPage();
  const watch = watchPortal(page);
  await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.evaluate(() => {
    window.__sameDocument = true;
  });
  const chip = page.locator('[data-filter="state"] a[data-value="validated"]');
  const before = await chip.elementHandle();
  await chip.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(`${portal.url}/catalog?state=validated`);
  await watch.settle();
  await page.waitForFunction(() => document.querySelector('[data-filter="state"] a.chip.active')?.dataset.value === 'validated');
  // The same element, still focused: the chips were brought up to date, not written again.
  assert.equal(await before.evaluate((el) => el === document.activeElement), true, 'the chip lost the focus');
  assert.equal(await chip.getAttribute('aria-current'), 'true');
  assert.equal(await page.locator('[data-filter="state"] a[aria-current]').count(), 1);
  // The other groups' links now keep the state filter.
  assert.equal(
    await page.locator('[data-filter="qualifier"] a.chip').first().getAttribute('href'),
    '/catalog?state=validated',
  );
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the chip reloaded the page');
  // The list follows: every row shown is validated.
  await page.waitForFunction(() => {
    const badges = [...document.querySelectorAll('tr.item-row .badge[class*="state-"]')];
    return badges.length > 0 && badges.every((b) => b.classList.contains('state-validated'));
  });
  assert.deepEqual(watch.errors, []);
  await page.close();
});

test('a focused primary button and an active chip show a ring that contrasts with the page', async () => {
  const page = await browsers.researcher.context.newPage();
  await page.goto(`${portal.url}/catalog`, { waitUntil: 'load' });
  await waitForHydration(page);
  for (const selector of ['form.search button[type="submit"]', '[data-filter="state"] a.chip.active']) {
    await page.locator(selector).focus();
    // Keyboard focus (focus-visible) as a Tab would give it.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const ring = await page.locator(selector).evaluate((el) => {
      const s = getComputedStyle(el);
      return { width: parseFloat(s.outlineWidth), style: s.outlineStyle, color: s.outlineColor, offset: parseFloat(s.outlineOffset) };
    });
    assert.ok(ring.width >= 2 && ring.style !== 'none', `${selector}: ${JSON.stringify(ring)}`);
    assert.ok(ring.offset >= 1, `${selector}: the ring stands off the element's own colour`);
    // Dark ink on the light page around the element.
    assert.equal(ring.color, 'rgb(28, 36, 48)', selector);
  }
  await page.close();
});
