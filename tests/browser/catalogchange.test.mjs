// An admin changes a catalog item's state in the UI: the "Propose a change" form on the item
// page, the preview with the catalog file's diff, then the request page; the branch appears in
// the local monorepo with only the item's lines changed. Researchers never see the form, and
// the form works without JavaScript.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startPortal, launchBrowser, watchErrors, waitForHydration, signIn } from './portal.mjs';

const SHOTS = new URL('./screenshots/', import.meta.url).pathname;
mkdirSync(SHOTS, { recursive: true });
const ITEM = 'vyos-sp';
const FILE = 'catalog/layers/03-rede.yaml';

let portal;
let ada;
let rui;

before(async () => {
  portal = await startPortal();
  ada = await launchBrowser();
  rui = await launchBrowser();
  await signIn(ada.context, portal.url, 'Ada Admin');
  await signIn(rui.context, portal.url, 'Rui Researcher');
});

after(async () => {
  await ada?.close();
  await rui?.close();
  await portal?.stop();
});

function git(...args) {
  return execFileSync('git', ['-C', join(portal.dataDir, 'monorepo'), ...args], { encoding: 'utf8' });
}

/** The request's branch once the worker has made it. */
async function waitForBranch(id) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const branches = git('branch', '--list', `mirante/${id}-*`, '--format=%(refname:short)').trim();
    if (branches) return branches;
    if (Date.now() > deadline) throw new Error(`no branch for request ${id}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The lines a branch's commit removes and adds, as git shows them. */
function changedLines(branch) {
  return git('diff', '--unified=0', `main...${branch}`)
    .split('\n')
    .filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---) /.test(l));
}

test('an admin changes an item state in the UI and the branch appears in the monorepo', async () => {
  const page = await ada.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/items/${ITEM}`, { waitUntil: 'load' });
  await waitForHydration(page);

  // The action comes first, above what the page says of the item.
  const first = await page.evaluate(() =>
    Boolean(document.querySelector('#propose-change').compareDocumentPosition(document.querySelector('.two-col')) & Node.DOCUMENT_POSITION_FOLLOWING));
  assert.ok(first, 'the change panel is above the item\'s details');
  await page.locator('#propose-change > summary').click();
  await page.locator('[name="state"]').selectOption('declared');
  await page.locator('[name="qualifier"]').selectOption('partial');
  await page.locator('[name="by"]').fill('ada');
  await page.locator('[name="date"]').fill('2026-11-30');
  await page.locator('[name="what"]').fill('failover: tested # twice');
  // Any kind of evidence, not only attestations.
  await page.locator('details.other-evidence > summary').click();
  await page.locator('[name="argocd_app"]').fill('storage-failover');
  await page.locator('[name="argocd_instance"]').fill('sp');
  await page.locator('[name="reason"]').fill('In IaC; the failover was only partly tested.');
  await page.screenshot({ path: `${SHOTS}catalogchange-form.png`, fullPage: true });
  await page.locator('form.change-form button[type="submit"]').click();
  await page.waitForURL(new RegExp(`/items/${ITEM}/change\\?`));
  await page.waitForSelector('pre.diff');
  const diff = (await page.locator('pre.diff span').allTextContents()).map((l) => l.replace(/\n$/, ''));
  assert.ok(diff.includes('-    state: validated'), diff.join('\n'));
  assert.ok(diff.includes('+    state: declared'), diff.join('\n'));
  assert.equal(await page.locator('details.file').getAttribute('data-path'), FILE);
  await page.screenshot({ path: `${SHOTS}catalogchange-preview.png`, fullPage: true });

  await page.locator('form.submit-bar button[type="submit"]').click();
  await page.waitForURL(/\/requests\/\d+$/);
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const branch = await waitForBranch(id);

  assert.equal(branch, `mirante/${id}-${ITEM}-state`);
  assert.deepEqual(git('diff', '--name-only', `main...${branch}`).trim().split('\n'), [FILE]);
  assert.deepEqual(changedLines(branch), [
    '-    state: validated',
    '+    state: declared',
    '+    qualifier: partial',
    '+      - kind: attestation',
    '+        by: "ada"',
    '+        date: "2026-11-30"',
    '+        what: "failover: tested # twice"',
    '+      - kind: argocd',
    '+        app: "storage-failover"',
    '+        instance: "sp"',
  ]);
  await page.goto(`${portal.url}/requests/${id}`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.screenshot({ path: `${SHOTS}catalogchange-request.png`, fullPage: true });
  assert.deepEqual(errors, []);
});

test('a researcher sees no change form and is refused the preview page', async () => {
  const page = await rui.context.newPage();
  await page.goto(`${portal.url}/items/${ITEM}`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.equal(await page.locator('#propose-change').count(), 0);

  const response = await page.goto(`${portal.url}/items/${ITEM}/change?state=desired&reason=x`);
  assert.equal(response.status(), 403);
});

test('the change form works without JavaScript and lists every bad field', async () => {
  const nojs = await launchBrowser({ javaScriptEnabled: false });
  try {
    await signIn(nojs.context, portal.url, 'Ada Admin');
    const page = await nojs.context.newPage();
    // An item of another catalog file than ITEM's, whose change an earlier test left open.
    await page.goto(`${portal.url}/items/linstor-franca`, { waitUntil: 'load' });
    await page.locator('#propose-change > summary').click();
    await page.locator('[name="state"]').selectOption('desired');
    await page.locator('[name="by"]').fill('ada');
    await page.locator('[name="reason"]').fill('Out of service.');
    await page.locator('form.change-form button[type="submit"]').click();
    await page.waitForURL(/\/items\/linstor-franca\/change\?/);
    // An attestation without a date or what: both named, nothing proposed.
    const refused = await page.locator('.error-box').innerText();
    assert.match(refused, /evidence\.date/);
    assert.match(refused, /evidence\.what/);

    await page.locator('[name="by"]').fill('');
    await page.locator('form.change-form button[type="submit"]').click();
    await page.waitForSelector('pre.diff');
    await page.locator('form.submit-bar button[type="submit"]').click();
    await page.waitForURL(/\/requests\/\d+$/);
  } finally {
    await nojs.close();
  }
});
