// Helpers for browser tests: start the real portal on a free port and Debian's Chromium.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const BIN = process.env.MIRANTE_BIN;
const SITE_ROOT = process.env.LEPTOS_SITE_ROOT;
const FAKE_ARGOCD_BIN = process.env.FAKE_ARGOCD_BIN;
/** The Bearer token the fake Argo CD accepts (`mirante_tests::argocd::TOKEN`). */
const ARGOCD_TOKEN = 'argocd-follow-token';

/** Resolves with the first match of `pattern` in what `child` prints, within 60 s. */
function waitForLine(child, pattern, what) {
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 60 s:\n${log}`)), 60_000);
    const onData = (chunk) => {
      log += chunk.toString();
      const m = log.match(pattern);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${log}`));
    });
  });
}

/**
 * Starts the fake Argo CD (`tests/argocd`, built by `cargo xtask test`) for the git monorepo
 * at `monorepo`: it answers as Argo CD running that monorepo's ApplicationSets would, a merged
 * folder synced at once and healthy `settleMs` later, and checks every request against Argo
 * CD's API description. `report()` is what it saw and every request that broke that contract.
 */
export async function startFakeArgo(monorepo, settleMs = 2000) {
  if (!FAKE_ARGOCD_BIN) throw new Error('FAKE_ARGOCD_BIN must be set (cargo xtask test does)');
  const child = spawn(FAKE_ARGOCD_BIN, [monorepo, String(settleMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await waitForLine(child, /listening (http:\/\/127\.0\.0\.1:\d+)/, 'the fake Argo CD');
  return {
    url,
    token: ARGOCD_TOKEN,
    async report() {
      const res = await fetch(`${url}/_fake/report`);
      return res.json();
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on('exit', r)));
    },
  };
}

/**
 * Starts `mirante serve` on 127.0.0.1:0 with a fresh SQLite data dir; resolves with its URL and
 * the data dir (which holds the local monorepo, `monorepo/`). With `{ argocd: true }` it
 * follows merged resources in a fake Argo CD for that monorepo ([`startFakeArgo`], as
 * `portal.argocd`), checked every second.
 */
export async function startPortal(extraEnv = {}, { argocd = false } = {}) {
  if (!BIN || !SITE_ROOT) throw new Error('MIRANTE_BIN and LEPTOS_SITE_ROOT must be set (cargo xtask test does)');
  const dataDir = mkdtempSync(join(tmpdir(), 'mirante-browser-'));
  const fake = argocd ? await startFakeArgo(join(dataDir, 'monorepo')) : null;
  if (fake) {
    extraEnv = {
      MIRANTE_ARGOCD_URL: fake.url,
      MIRANTE_ARGOCD_TOKEN: fake.token,
      MIRANTE_ARGOCD_POLL_SECS: '1',
      MIRANTE_ARGOCD_POLL_MAX_SECS: '2',
      ...extraEnv,
    };
  }
  const env = { ...process.env };
  // The embedded SQLite database under the fresh data dir, whatever the caller's shell has.
  delete env.DATABASE_URL;
  delete env.MIRANTE_CATALOG;
  const child = spawn(BIN, ['serve'], {
    env: {
      ...env,
      MIRANTE_BIND: '127.0.0.1:0',
      MIRANTE_DATA_DIR: dataDir,
      // Stopped by the tests, not taken out of a load balancer: no drain delay.
      MIRANTE_SHUTDOWN_DELAY_SECS: '0',
      LEPTOS_SITE_ROOT: SITE_ROOT,
      RUST_LOG: 'info',
      NO_COLOR: '1',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://${await waitForLine(child, /listening http\.addr=(127\.0\.0\.1:\d+)/, 'the portal')}`;
  // The last lines the portal wrote, shown if it ends while a test still needs it: a test
  // that then fails on "connection refused" says why the portal went away.
  const tail = [];
  const keep = (chunk) => {
    tail.push(...chunk.toString().split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`the portal at ${url} ended during the tests (code ${code}, signal ${signal}); its last lines:\n${tail.join('\n')}`);
    }
  });
  return {
    url,
    dataDir,
    argocd: fake,
    async stop() {
      stopping = true;
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
      await fake?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Launches headless Chromium with a fresh profile; `javaScriptEnabled: false` for no-JS runs. */
export async function launchBrowser(options = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'mirante-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Calls `onFailure` for each request of `page` that failed, except a fetch that a navigation of
 * the whole page cut off: the browser aborts what the page it leaves still had in flight (a
 * self-refreshing page's next check), and nobody is left to see its answer. A fetch the old page
 * starts while the new one is still loading is cut off as well: it was made before the new
 * document took the frame over.
 */
function onRequestFailed(page, onFailure) {
  let navigating = false;
  let committedAt = 0;
  page.on('request', (req) => {
    if (req.isNavigationRequest() && req.frame() === page.mainFrame()) navigating = true;
  });
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) {
      navigating = false;
      committedAt = Date.now();
    }
  });
  const started = new WeakMap();
  page.on('request', (req) => started.set(req, Date.now()));
  page.on('requestfailed', (req) => {
    const text = req.failure()?.errorText ?? '';
    const cutOff =
      text.includes('ERR_ABORTED') &&
      !req.isNavigationRequest() &&
      (navigating || (started.get(req) ?? Infinity) <= committedAt);
    onFailure(req, cutOff);
  });
}

/** Collects console errors and failed requests of a page, to assert there are none. */
export function watchErrors(page) {
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  onRequestFailed(page, (req, cutOff) => {
    if (!cutOff) errors.push(`requestfailed: ${req.url()} ${req.failure()?.errorText}`);
  });
  return errors;
}

/** Waits until the wasm bundle has hydrated the page. */
export async function waitForHydration(page) {
  await page.waitForSelector('body[data-hydrated="true"]', { timeout: 30_000 });
}

/**
 * Signs a browser context in through the development sign-in as a demo user (`Ada Admin` or
 * `Rui Researcher`), as a person would: the sign-in page, then the user's button.
 */
export async function signIn(context, url, who = 'Ada Admin') {
  const page = await context.newPage();
  try {
    await page.goto(`${url}/auth/login`, { waitUntil: 'load' });
    await page.locator('button.demo-user', { hasText: who }).click();
    await page.waitForURL(`${url}/`);
  } finally {
    await page.close();
  }
}

/**
 * Watches a page for what a reader would call broken: console errors, uncaught exceptions,
 * Leptos' warnings about signals read outside a reactive context, and any `/_fn/` server
 * function answering 4xx or 5xx. Also counts requests in flight, for `settle`.
 */
export function watchPortal(page) {
  const errors = [];
  let inFlight = 0;
  let lastChange = Date.now();
  const bump = (d) => {
    inFlight += d;
    lastChange = Date.now();
  };
  page.on('console', (msg) => {
    const text = msg.text();
    if (msg.type() === 'error') errors.push(`console error on ${page.url()}: ${text}`);
    else if (/reactive tracking context|outside a reactive/i.test(text)) {
      errors.push(`leptos warning on ${page.url()}: ${text.split('\n').slice(0, 3).join(' ')}`);
    }
  });
  page.on('pageerror', (err) => errors.push(`pageerror on ${page.url()}: ${err.message}`));
  page.on('request', () => bump(1));
  page.on('requestfinished', () => bump(-1));
  onRequestFailed(page, (req, cutOff) => {
    bump(-1);
    if (!cutOff) errors.push(`requestfailed: ${req.url()} ${req.failure()?.errorText}`);
  });
  page.on('response', async (res) => {
    if (new URL(res.url()).pathname.startsWith('/_fn/') && res.status() >= 400) {
      const body = await res.text().catch(() => '');
      errors.push(`${res.status()} from ${res.url()} on ${page.url()}: ${body.slice(0, 200)}`);
    }
  });
  return {
    errors,
    /** Resolves once no request has been in flight for `quietMs`. */
    async settle(quietMs = 250, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (inFlight <= 0 && Date.now() - lastChange >= quietMs) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`${page.url()} kept loading for ${timeoutMs} ms`);
    },
  };
}

/** The problems an error box on the page shows, as text; empty when there is none. */
export async function errorBoxes(page) {
  return page.locator('.error-box').allInnerTexts();
}

/**
 * Addresses of pages with an id in them, found by reading the portal as a person would: an
 * item and a layer from the catalog, a site from the sites page, the GPU workspace form and its preview, and a request a
 * researcher submits from that preview. `context` must be signed in as a researcher.
 */
export async function discoverPages(context, url) {
  const found = {};
  const page = await context.newPage();
  try {
    await page.goto(`${url}/catalog`, { waitUntil: 'load' });
    found.item = await page.locator('table.items a.item-name').first().getAttribute('href');
    // An admin's change preview needs a change: another state than the item's.
    const state = await page.locator('table.items tbody tr').first().locator('.badge[class*="state-"]').getAttribute('class');
    found.change = `${found.item}/change?state=${/state-desired/.test(state) ? 'declared' : 'desired'}&reason=A+look+at+the+preview`;
    found.layer = await page.locator('table.items td a[href^="/layers/"]').first().getAttribute('href');
    await page.goto(`${url}/sites`, { waitUntil: 'load' });
    found.site = await page.locator('.site-card h2 a').first().getAttribute('href');
    await page.goto(`${url}/self-service`, { waitUntil: 'load' });
    found.template = await page.locator('[data-template="gpu-workspace"] h2 a').getAttribute('href');
    found.preview = `${found.template}/preview?name=nav&cluster=gpu-sp-01&gpus=1`;
    await page.goto(`${url}${found.preview}`, { waitUntil: 'load' });
    await waitForHydration(page);
    await page.locator('form.submit-bar button[type="submit"]').click();
    await page.waitForURL(/\/requests\/\d+$/);
    found.request = new URL(page.url()).pathname;
  } finally {
    await page.close();
  }
  return found;
}

/** Every page of the web UI `role` (`researcher` or `admin`) may open, given `discoverPages`. */
export function pagesFor(role, found) {
  const pages = [
    '/',
    '/catalog',
    found.layer,
    found.item,
    '/sites',
    found.site,
    '/decisions',
    '/search?q=cilium',
    '/roadmap',
    '/roadmap/graph',
    '/self-service',
    found.template,
    found.preview,
    '/requests',
    found.request,
  ];
  if (role === 'admin') pages.push('/findings', '/admin/templates', found.change);
  return pages;
}
