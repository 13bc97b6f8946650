// Self-service end to end in a real browser: a researcher asks for a GPU workspace and a
// PostgreSQL database through the forms, an admin approves both, the worker opens two branches
// in the local monorepo holding exactly the previewed files, and the admin merges one, which a
// fake Argo CD running the monorepo's ApplicationSets then applies, until it is live.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startPortal, launchBrowser, watchErrors, waitForHydration, signIn } from './portal.mjs';

const SHOTS = new URL('./screenshots/', import.meta.url).pathname;
mkdirSync(SHOTS, { recursive: true });

let portal;
let rui;
let ada;

before(async () => {
  portal = await startPortal({}, { argocd: true });
  rui = await launchBrowser();
  ada = await launchBrowser();
  await signIn(rui.context, portal.url, 'Rui Researcher');
  await signIn(ada.context, portal.url, 'Ada Admin');
});

after(async () => {
  await rui?.close();
  await ada?.close();
  // Every request the portal sent Argo CD is one its API description documents.
  const report = await portal?.argocd?.report();
  await portal?.stop();
  if (report) {
    assert.ok(report.seen.length > 0, 'Argo CD was asked');
    assert.deepEqual(report.problems, [], 'requests and answers keep to Argo CD\'s API description');
  }
});

function git(...args) {
  return execFileSync('git', ['-C', join(portal.dataDir, 'monorepo'), ...args], { encoding: 'utf8' });
}

/** The new files of a preview: path → content, read back from each file's diff. */
async function previewedFiles(page) {
  const files = {};
  for (const file of await page.locator('details.file').all()) {
    const path = await file.getAttribute('data-path');
    const lines = await file.locator('pre.diff span').allTextContents();
    files[path] = lines
      .map((l) => l.replace(/\n$/, ''))
      .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
      .map((l) => `${l.slice(1)}\n`)
      .join('');
  }
  return files;
}

/** Fills a template's form (hydrated), previews it, and returns the previewed files. */
async function fillAndPreview(page, template, fields) {
  await page.goto(`${portal.url}/self-service`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.locator(`[data-template="${template}"] h2 a`).click();
  await page.waitForURL(`${portal.url}/self-service/${template}`);
  await page.waitForSelector('form.ss-form');
  for (const [name, value] of Object.entries(fields)) {
    const input = page.locator(`[name="${name}"]`);
    if ((await input.evaluate((el) => el.tagName)) === 'SELECT') await input.selectOption(value);
    else await input.fill(value);
  }
  await page.locator('form.ss-form button[type="submit"]').click();
  await page.waitForURL(new RegExp(`/self-service/${template}/preview\\?`));
  await page.waitForSelector('details.file');
  return previewedFiles(page);
}

/** Submits the previewed request and returns its id from the request page's address. */
async function submit(page) {
  await page.locator('form.submit-bar button[type="submit"]').click();
  await page.waitForURL(/\/requests\/\d+$/);
  await page.waitForSelector('.request-state [data-state]');
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  assertTitleNames(await page.title(), id);
  return id;
}

/** The request page's title names the request, in either language. */
function assertTitleNames(title, id) {
  assert.match(title.replace(/[\u2068\u2069]/g, ''), new RegExp(`#${id} · Mirante$`));
}

async function stateOf(page) {
  return page.locator('.request-state [data-state]').getAttribute('data-state');
}

/** Reloads a request page until its state is `want` (the worker runs in the background). */
async function waitForState(page, id, want) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    await page.goto(`${portal.url}/requests/${id}`, { waitUntil: 'load' });
    // Let the page finish loading before the next reload (no aborted requests).
    await waitForHydration(page);
    assertTitleNames(await page.title(), id);
    const state = await stateOf(page);
    if (state === want) return;
    if (Date.now() > deadline) throw new Error(`request ${id} is ${state}, not ${want}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const requests = {};
const previews = {};

test('a researcher requests a 1-GPU workspace; the database form offers no namespace before one of theirs is merged', async () => {
  const page = await rui.context.newPage();
  const errors = watchErrors(page);

  previews.gpu = await fillAndPreview(page, 'gpu-workspace', {
    name: 'nlp',
    cluster: 'gpu-sp-01',
    gpus: '1',
  });
  assert.ok(Object.keys(previews.gpu).length >= 2, `files: ${Object.keys(previews.gpu)}`);
  for (const path of Object.keys(previews.gpu)) {
    assert.match(path, /^apps\/sp\/gpu-sp-01\/workspaces\/nlp\//);
  }
  assert.match(await page.locator('code.target').innerText(), /apps\/sp\/gpu-sp-01\/workspaces\/nlp/);
  assert.ok(Object.values(previews.gpu).some((c) => /nvidia\.com\/gpu/.test(c)), 'a GPU quota');
  const binding = previews.gpu['apps/sp/gpu-sp-01/workspaces/nlp/rolebinding.yaml'] ?? '';
  assert.match(binding, /kind: RoleBinding/);
  assert.match(binding, /name: "oidc:rui"/, 'Rui, as the cluster names him, is bound in the namespace');
  assert.ok(await page.locator('.diff .add').count(), 'added lines are marked');
  await page.screenshot({ path: `${SHOTS}selfservice-preview.png`, fullPage: true });
  requests.gpu = await submit(page);
  assert.equal(await stateOf(page), 'awaiting_approval');
  // The values carry the template's titles, not its parameter names.
  const labels = await page.locator('.values dt').evaluateAll((dts) => dts.map((dt) => [dt.dataset.name, dt.textContent]));
  assert.ok(labels.length >= 3, `values: ${labels}`);
  for (const [name, label] of labels) assert.notEqual(label, name, `${name} is shown by its title`);
  assert.equal(await page.locator('main h1').innerText(), 'GPU workspace');
  // The request page says what happens next, in the reader's language.
  assert.match(await page.locator('.next-step').innerText(), /an admin reviews/i);
  await page.locator('.lang-switch a[lang="pt-BR"]').click();
  await page.waitForFunction(() => /um admin revisa/i.test(document.querySelector('.next-step')?.textContent ?? ''));
  assert.equal(await page.locator('main h1').innerText(), 'Workspace com GPU');
  // The list names requests by their template's title in the reader's language too.
  await page.locator('.crumbs a[href="/requests"]').click();
  await page.waitForURL(`${portal.url}/requests`);
  await page.waitForFunction(() => document.querySelector('tr.request-row a.item-name')?.textContent === 'Workspace com GPU');
  await page.goBack();
  await page.waitForSelector('.next-step');
  await page.locator('.lang-switch a[lang="en"]').click();
  await page.waitForFunction(() => /an admin reviews/i.test(document.querySelector('.next-step')?.textContent ?? ''));

  await page.screenshot({ path: `${SHOTS}selfservice-request.png`, fullPage: true });
  // The researcher sees no Approve button on their own request.
  assert.equal(await page.locator('button.approve').count(), 0);

  // A database goes in one of Rui's workspaces' namespaces: none is on the base branch yet.
  await page.goto(`${portal.url}/self-service/postgres-cnpg`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.deepEqual(await namespaceChoices(page), []);
  // Before a cluster is chosen the hint speaks of every cluster, then of the one chosen.
  assert.match(await page.locator('.no-namespace').innerText(), /any cluster|nenhum cluster/);
  await page.locator('[name="cluster"]').selectOption('gpu-sp-01');
  await page.locator('.no-namespace a').waitFor();
  await page.waitForFunction(() =>
    /this cluster|neste cluster/.test(document.querySelector('.no-namespace')?.textContent ?? ''),
  );
  assert.deepEqual(errors, []);
  await page.close();
});

/** The namespaces the database form offers (its select's options, the placeholder left out). */
async function namespaceChoices(page) {
  return page.locator('select[name="namespace"] option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
}

test('more GPUs than the cluster has is refused next to the field, in the browser and by the server', async () => {
  const page = await rui.context.newPage();
  await page.goto(`${portal.url}/self-service/gpu-workspace`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.locator('[name="name"]').fill('big');
  await page.locator('[name="cluster"]').selectOption('gpu-sp-01');
  await page.locator('[name="gpus"]').fill('2');
  await page.locator('form.ss-form button[type="submit"]').click();
  const error = page.locator('[data-field="gpus"] .field-error');
  await page.waitForFunction(() => document.querySelector('[data-field="gpus"] .field-error')?.textContent);
  assert.match(await error.innerText(), /gpu-sp-01.*1/);
  assert.match(page.url(), /\/self-service\/gpu-workspace$/, 'the form stays on screen');
  // The focus moves to the first refused field, where its error is.
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'gpus');
  // The field's own bounds follow the chosen cluster (one GPU on gpu-sp-01).
  assert.equal(await page.locator('[name="gpus"]').getAttribute('max'), '1');

  // The server is the authority: the same values sent without the browser's check.
  const res = await page.goto(
    `${portal.url}/self-service/gpu-workspace/preview?name=big&cluster=gpu-sp-01&gpus=3`,
    { waitUntil: 'load' },
  );
  assert.equal(res.status(), 422);
  assert.match(await page.locator('[data-field="gpus"] .field-error').innerText(), /gpu-sp-01.*1/);
  assert.equal(await page.locator('[name="gpus"]').inputValue(), '3', 'the values are kept');
  await page.screenshot({ path: `${SHOTS}selfservice-capacity.png`, fullPage: true });
  await page.close();
});

/** Opens `path` as Rui, hydrated, marked so that a reload would show (the mark would be gone). */
async function openMarked(path) {
  const page = await rui.context.newPage();
  await page.goto(`${portal.url}${path}`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.evaluate(() => { window.__notReloaded = true; });
  return page;
}

test('an admin approves the workspace; the worker opens a branch holding exactly the previewed files', async () => {
  // Rui watches his request while Ada decides: the page follows it by itself.
  const watching = await openMarked(`/requests/${requests.gpu}`);
  assert.equal(await stateOf(watching), 'awaiting_approval');
  const page = await ada.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/requests`, { waitUntil: 'load' });
  await waitForHydration(page);
  const first = await page.locator('tr.request-row').first().getAttribute('data-state');
  assert.equal(first, 'awaiting_approval');
  await page.screenshot({ path: `${SHOTS}selfservice-requests.png`, fullPage: true });

  for (const id of [requests.gpu]) {
    await page.goto(`${portal.url}/requests/${id}`, { waitUntil: 'load' });
    await waitForHydration(page);
    await page.locator('button.approve').click();
    await page.waitForFunction(() => !document.querySelector('button.approve'));
    await waitForState(page, id, 'proposed');
    assert.match(await page.locator('.pull-request').innerText(), /#\d+/);
  }
  // The local forge's pull request is the proposed change, read from git: the branch's one
  // commit and every previewed file with its diff.
  await page.locator('.pull-request a').click();
  await page.waitForURL(`${portal.url}/requests/${requests.gpu}/change`);
  await page.waitForSelector('details.file');
  assert.equal(await page.locator('.pr-state').getAttribute('data-state'), 'open');
  assert.equal(await page.locator('ol.commits li').count(), 1);
  const proposedPaths = await page.locator('details.file').evaluateAll((ds) => ds.map((d) => d.dataset.path));
  assert.deepEqual(proposedPaths.sort(), Object.keys(previews.gpu).sort());
  assert.ok((await page.locator('details.file pre.diff span.add').count()) > 0, 'added lines are marked');
  await page.screenshot({ path: `${SHOTS}selfservice-proposed-change.png`, fullPage: true });
  await watching.waitForFunction(
    () => document.querySelector('.request-state [data-state]')?.dataset.state === 'proposed',
    null,
    { timeout: 60_000 },
  );
  assert.equal(await watching.evaluate(() => window.__notReloaded), true, 'no reload');
  await watching.close();

  const branches = git('branch', '--list', 'mirante/*', '--format=%(refname:short)')
    .split('\n')
    .filter(Boolean);
  assert.equal(branches.length, 1, `branches: ${branches}`);
  for (const [key, id] of Object.entries(requests)) {
    const branch = branches.find((b) => b.startsWith(`mirante/${id}-`));
    assert.ok(branch, `a branch mirante/${id}-<slug> in ${branches}`);
    const changed = git('diff', '--name-only', `main...${branch}`).split('\n').filter(Boolean).sort();
    assert.deepEqual(changed, Object.keys(previews[key]).sort());
    for (const [path, content] of Object.entries(previews[key])) {
      assert.equal(git('show', `${branch}:${path}`), content, `${path} on ${branch}`);
    }
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('the admin merges one request after a confirmation that names what is merged', async () => {
  // Rui's resources page, open before the merge, follows the workspace by itself.
  const resources = await openMarked('/resources');
  const card = `.resource[data-id="${requests.gpu}"]`;
  assert.equal(await resources.locator(card).getAttribute('data-state'), 'proposed');
  const page = await ada.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/requests/${requests.gpu}`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.match(await page.locator('.next-step').innerText(), /merge/i, 'the page says the merge is next');
  // One click does not merge: it opens the confirmation.
  assert.equal(await page.locator('button.merge').isVisible(), false);
  await page.locator('summary.merge-open').click();
  const what = await page.locator('.merge-what').innerText();
  assert.match(what, /mirante\/\d+-/, `the branch is named: ${what}`);
  assert.match(what, /apps\/sp\/gpu-sp-01\/workspaces\/nlp/, `the target is named: ${what}`);
  const listed = await page.locator('.merge-files code').allInnerTexts();
  assert.deepEqual(listed.sort(), Object.keys(previews.gpu).sort(), 'every file to be merged is listed');
  await page.locator('button.merge').click();
  await page.waitForFunction(() => document.querySelector('.request-state [data-state]')?.dataset.state === 'merged');
  const timeline = await page.locator('.timeline li').evaluateAll((lis) => lis.map((li) => li.dataset.state));
  assert.deepEqual(timeline.slice(-1), ['merged']);
  assert.ok(timeline.includes('approved'), `timeline: ${timeline}`);
  const files = git('ls-tree', '-r', '--name-only', 'main').split('\n');
  for (const path of Object.keys(previews.gpu)) assert.ok(files.includes(path), `${path} on main`);
  await page.waitForFunction(() => /main branch|branch principal/.test(document.querySelector('.next-step')?.textContent ?? ''));
  await page.screenshot({ path: `${SHOTS}selfservice-merged.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();

  // Merged, and then on its way in Argo CD: the page may see either first.
  await resources.waitForFunction(
    (sel) => ['merged', 'syncing', 'live'].includes(document.querySelector(sel)?.dataset.state),
    card,
    { timeout: 60_000 },
  );
  assert.equal(await resources.evaluate(() => window.__notReloaded), true, 'no reload');
  // Argo CD applies the merged folder through the cluster's ApplicationSet: the card goes on
  // by itself to live, naming the Application and the revision it runs.
  await resources.waitForFunction(
    (sel) => document.querySelector(sel)?.dataset.state === 'live',
    card,
    { timeout: 60_000 },
  );
  assert.equal(await resources.evaluate(() => window.__notReloaded), true, 'no reload');
  const merge = git('rev-parse', 'main').trim();
  const deployed = await resources.locator(`${card} .deployment`).innerText();
  assert.match(deployed, /mirante-apps-sp-gpu-sp-01-workspaces-nlp/, `the application is named: ${deployed}`);
  assert.ok(deployed.includes(merge.slice(0, 7)), `the merge's revision is shown: ${deployed}`);
  assert.equal(await resources.locator(`${card} [data-deployment="error"]`).count(), 0);
  // Live, it says how to reach it: the kubeconfig for ws-nlp and the commands.
  await resources.locator(`${card} details.kubeconfig summary`).click();
  assert.match(await resources.locator(`${card} details.kubeconfig pre`).innerText(), /namespace: ws-nlp/);
  assert.match(await resources.locator(`${card} pre.commands`).innerText(), /kubectl -n ws-nlp get pods/);
  await resources.screenshot({ path: `${SHOTS}selfservice-resource.png`, fullPage: true });
  await resources.close();
});

test("once the workspace is merged, Rui's database form offers its namespace and only it", async () => {
  const page = await rui.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/self-service/postgres-cnpg`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.deepEqual(await namespaceChoices(page), ['ws-nlp']);
  // The list follows the cluster: ws-nlp is on gpu-sp-01, none of Rui's is on k3s-franca.
  await page.locator('[name="cluster"]').selectOption('k3s-franca');
  await page.locator('.no-namespace').waitFor();
  assert.deepEqual(await namespaceChoices(page), []);
  await page.locator('[name="cluster"]').selectOption('gpu-sp-01');
  await page.locator('.no-namespace').waitFor({ state: 'detached' });
  assert.deepEqual(await namespaceChoices(page), ['ws-nlp']);
  previews.pg = await fillAndPreview(page, 'postgres-cnpg', {
    name: 'appdb',
    cluster: 'gpu-sp-01',
    namespace: 'ws-nlp',
    databases: 'app',
  });
  const kinds = Object.values(previews.pg).join('\n');
  assert.match(kinds, /kind: Cluster/);
  assert.doesNotMatch(kinds, /password:/i, 'no password in the files');
  requests.pg = await submit(page);
  assert.equal(await stateOf(page), 'awaiting_approval');
  assert.deepEqual(errors, []);
  // Someone else's namespace, sent without the form, is refused by the server.
  const res = await page.goto(
    `${portal.url}/self-service/postgres-cnpg/preview?name=x&cluster=gpu-sp-01&namespace=kube-system&databases=app`,
    { waitUntil: 'load' },
  );
  assert.equal(res.status(), 422);
  assert.ok(await page.locator('[data-field="namespace"] .field-error').count());
  await page.close();

  const admin = await ada.context.newPage();
  await admin.goto(`${portal.url}/requests/${requests.pg}`, { waitUntil: 'load' });
  await waitForHydration(admin);
  await admin.locator('button.approve').click();
  await waitForState(admin, requests.pg, 'proposed');
  await admin.close();
});

test('a second 1-GPU workspace on the full cluster is refused with the numbers', async () => {
  const page = await ada.context.newPage();
  // nlp's workspace, merged above, holds gpu-sp-01's only GPU.
  await page.goto(`${portal.url}/self-service/gpu-workspace`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.match(await page.locator('[name="cluster"] option[value="gpu-sp-01"]').innerText(), /0 \/ 1 GPUs free/);
  const res = await page.goto(
    `${portal.url}/self-service/gpu-workspace/preview?name=ada-lab&cluster=gpu-sp-01&gpus=1`,
    { waitUntil: 'load' },
  );
  assert.equal(res.status(), 422);
  const error = await page.locator('[data-field="gpus"] .field-error').innerText();
  assert.match(error, /Asks 1, gpu-sp-01 has 1, 1 allocated to ws-nlp/);
  assert.equal(await page.locator('details.file').count(), 0, 'nothing to submit');
  await page.close();
});

test("a researcher cannot open an admin's request", async () => {
  const admin = await ada.context.newPage();
  await fillAndPreview(admin, 'postgres-cnpg', { name: 'adadb', cluster: 'k3s-franca', namespace: 'ws-ada', databases: 'lab' });
  const adaRequest = await submit(admin);
  assert.equal(await admin.locator('button.approve').count(), 1, 'admins decide');
  await admin.close();

  const page = await rui.context.newPage();
  const res = await page.goto(`${portal.url}/requests/${adaRequest}`, { waitUntil: 'load' });
  assert.equal(res.status(), 404);
  assert.equal(await page.locator('button.approve').count(), 0);
  await page.goto(`${portal.url}/requests`, { waitUntil: 'load' });
  const ids = await page.locator('tr.request-row').evaluateAll((rows) => rows.map((r) => Number(r.dataset.id)));
  assert.ok(!ids.includes(adaRequest), `rui sees only their requests: ${ids}`);
  await page.close();
});

test('the request form works without JavaScript: preview, submit, request page', async () => {
  const nojs = await launchBrowser({ javaScriptEnabled: false });
  try {
    await signIn(nojs.context, portal.url, 'Rui Researcher');
    const page = await nojs.context.newPage();
    // A database: the cluster's only GPU is taken by now.
    await page.goto(`${portal.url}/self-service/postgres-cnpg`, { waitUntil: 'load' });
    await page.locator('[name="name"]').fill('offline');
    await page.locator('[name="cluster"]').selectOption('gpu-sp-01');
    await page.locator('[name="namespace"]').selectOption('ws-nlp');
    await page.locator('[name="databases"]').fill('app');
    await page.locator('form.ss-form button[type="submit"]').click();
    await page.waitForURL(/\/preview\?/);
    assert.ok(await page.locator('details.file').count() >= 2);
    await page.locator('form.submit-bar button[type="submit"]').click();
    await page.waitForURL(/\/requests\/\d+$/);
    assert.equal(await stateOf(page), 'awaiting_approval');
  } finally {
    await nojs.close();
  }
});

/** Ada merges request `id` through the request page's confirmation. */
async function mergeAsAda(id) {
  const page = await ada.context.newPage();
  await page.goto(`${portal.url}/requests/${id}`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.locator('summary.merge-open').click();
  await page.locator('button.merge').click();
  await page.waitForFunction(() => document.querySelector('.request-state [data-state]')?.dataset.state === 'merged');
  await page.close();
}

/** Reloads a resource's page until its state is `want`. */
async function waitForResource(page, id, want) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await page.goto(`${portal.url}/resources/${id}`, { waitUntil: 'load' });
    await waitForHydration(page);
    const state = await page.locator(`.resource[data-id="${id}"]`).getAttribute('data-state');
    if (state === want) return;
    if (Date.now() > deadline) throw new Error(`resource ${id} is ${state}, not ${want}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

test('Rui extends his workspace without approval, is refused a second GPU with the numbers, removes it, and the GPU is free again', async () => {
  const target = 'apps/sp/gpu-sp-01/workspaces/nlp';
  const page = await rui.context.newPage();
  const errors = watchErrors(page);
  // From the list of resources to the workspace's own page.
  await page.goto(`${portal.url}/resources`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.locator(`.resource[data-id="${requests.gpu}"] a.item-name`).click();
  await page.waitForURL(`${portal.url}/resources/${requests.gpu}`);
  await page.locator('form.extend-form').waitFor();
  assert.equal(await page.locator('#update-gpus').inputValue(), '1', 'the form holds the current values');

  // Ten more days, counted from today: the preview shows the expiry lines changing and no
  // approval (up to 30 days), so once submitted it is proposed at once.
  await page.locator('#extend-days').fill('10');
  await page.locator('button.extend').click();
  await page.waitForURL(new RegExp(`/resources/${requests.gpu}/preview\\?`));
  await page.waitForSelector('details.file');
  const expiresIn10 = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
  const diffs = (await page.locator('details.file pre').allInnerTexts()).join('\n');
  assert.match(diffs, new RegExp(`\\+.*${expiresIn10}`), 'the diff shows the new expiry');
  assert.equal(await page.locator('.approval').getAttribute('data-needs-approval'), 'false');
  await page.screenshot({ path: `${SHOTS}daytwo-preview.png`, fullPage: true });
  await page.locator('form.submit-bar button[type="submit"]').click();
  await page.waitForURL(/\/requests\/\d+$/);
  const extension = Number(new URL(page.url()).pathname.split('/').pop());
  assert.equal(await page.locator('.request-action').getAttribute('data-action'), 'extend');
  await waitForState(page, extension, 'proposed');
  await mergeAsAda(extension);
  const expires = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
  assert.match(git('show', `main:${target}/namespace.yaml`), new RegExp(`mirante.dev/expires: "?${expires}`));
  await page.screenshot({ path: `${SHOTS}daytwo-extended.png`, fullPage: true });

  // Two GPUs where the cluster has one: refused with the numbers, nothing stored.
  await waitForResource(page, requests.gpu, 'live');
  await page.locator('#update-gpus').fill('2');
  await page.locator('button.update').click();
  await page.waitForURL(new RegExp(`/resources/${requests.gpu}/preview\\?`));
  await page.waitForFunction(() => /gpu-sp-01/.test(document.querySelector('.error-box')?.textContent ?? ''));
  const refused = await page.locator('.error-box').innerText();
  assert.match(refused, /2\b.*gpu-sp-01.*\b1\b/, `the numbers are given: ${refused}`);
  assert.equal(await page.locator('form.submit-bar').count(), 0, 'nothing to submit');
  await page.locator('a.button', { hasText: /back to the resource/i }).click();
  await page.waitForURL(`${portal.url}/resources/${requests.gpu}`);
  await page.screenshot({ path: `${SHOTS}daytwo-refused.png`, fullPage: true });

  // Removal, after a confirmation naming the folder: its pull request deletes every file.
  await page.locator('summary.remove-open').click();
  assert.match(await page.locator('.remove-what').innerText(), new RegExp(target));
  await page.locator('button.remove').click();
  await page.waitForURL(new RegExp(`/resources/${requests.gpu}/preview\\?`));
  await page.waitForSelector('details.file');
  const statuses = await page.locator('details.file .badge').allInnerTexts();
  assert.ok(statuses.length >= 2 && statuses.every((t) => /deleted/i.test(t)), `every file is deleted: ${statuses}`);
  await page.locator('form.submit-bar button[type="submit"]').click();
  await page.waitForURL(/\/requests\/\d+$/);
  const removal = Number(new URL(page.url()).pathname.split('/').pop());
  assert.equal(await page.locator('.request-action').getAttribute('data-action'), 'remove');
  await waitForState(page, removal, 'proposed');
  const branch = await page.locator('code.branch').innerText();
  assert.equal(git('ls-tree', '-r', '--name-only', branch, '--', target).trim(), '', 'the branch deletes the folder');
  assert.ok(await page.locator('.removed-files li').count() >= 2, 'the page lists the files it deletes');
  await mergeAsAda(removal);
  assert.equal(git('ls-tree', '-r', '--name-only', 'main', '--', target).trim(), '', 'the folder is gone from main');
  await waitForResource(page, requests.gpu, 'removed');
  assert.equal(await page.locator('form.extend-form').count(), 0, 'a removed resource offers no change');
  await page.screenshot({ path: `${SHOTS}daytwo-removed.png`, fullPage: true });

  // The GPU is free again: the form says so and a new request for it is accepted.
  await page.goto(`${portal.url}/self-service/gpu-workspace`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.match(await page.locator('[name="cluster"] option[value="gpu-sp-01"]').innerText(), /1 \/ 1 GPUs free/);
  await fillAndPreview(page, 'gpu-workspace', { name: 'nlp2', cluster: 'gpu-sp-01', gpus: '1' });
  requests.again = await submit(page);
  assert.equal(await stateOf(page), 'awaiting_approval', 'the new request is taken');
  // The refused preview of two GPUs was answered 422 on purpose (the browser logs that load);
  // nothing else went wrong.
  assert.deepEqual(errors.filter((e) => !/status of 422/.test(e)), []);
  assert.equal(errors.length, 1, `one refused preview: ${errors}`);
  await page.close();
});

test('a researcher withdraws a request before it is proposed, and nothing reaches the monorepo', async () => {
  const page = await rui.context.newPage();
  const errors = watchErrors(page);
  // nlp2, asked for above, waits for an admin's approval.
  await page.goto(`${portal.url}/requests/${requests.again}`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.equal(await stateOf(page), 'awaiting_approval');
  await page.locator('button.withdraw').click();
  await page.waitForFunction(() => document.querySelector('.request-state [data-state]')?.dataset.state === 'closed');
  const last = await page.locator('.timeline li').last().innerText();
  assert.match(last, /rui/i, `who withdrew it is on the timeline: ${last}`);
  assert.equal(await page.locator('button.withdraw').count(), 0, 'a closed request cannot be withdrawn again');
  assert.equal(git('branch', '--list', `mirante/${requests.again}-*`).trim(), '', 'no branch was opened');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a withdrawn request is asked again with changes: the form opens filled, and the new request links the old', async () => {
  const page = await rui.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${portal.url}/requests/${requests.again}`, { waitUntil: 'load' });
  await waitForHydration(page);
  await page.locator('a.resubmit-link').click();
  await page.waitForURL(/\/self-service\/gpu-workspace\?/);
  await page.waitForSelector('form.ss-form');
  assert.equal(await page.locator('[name="name"]').inputValue(), 'nlp2', 'the form holds the old values');
  assert.match(await page.locator('.resubmitting').innerText(), new RegExp(`#${requests.again}`));
  await page.locator('[name="purpose"]').fill('a second try, with a purpose');
  await page.locator('form.ss-form button[type="submit"]').click();
  await page.waitForURL(/\/self-service\/gpu-workspace\/preview\?/);
  await page.waitForSelector('details.file');
  const newer = await submit(page);
  assert.notEqual(newer, requests.again);
  assert.equal(await page.locator('a.resubmits').getAttribute('href'), `/requests/${requests.again}`);
  await page.goto(`${portal.url}/requests/${requests.again}`, { waitUntil: 'load' });
  await waitForHydration(page);
  assert.equal(await page.locator('.resubmitted-as a').getAttribute('href'), `/requests/${newer}`);
  assert.equal(await page.locator('a.resubmit-link').count(), 0, 'asked again once');
  await page.screenshot({ path: `${SHOTS}resubmitted.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});
