// Helpers for browser tests: start the real portal on a free port and Debian's Chromium.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const BIN = process.env.MIRANTE_BIN;
const SITE_ROOT = process.env.LEPTOS_SITE_ROOT;

/**
 * Starts `mirante serve` on 127.0.0.1:0 with a fresh SQLite data dir; resolves with its URL and
 * the data dir (which holds the local monorepo, `monorepo/`).
 */
export async function startPortal(extraEnv = {}) {
  if (!BIN || !SITE_ROOT) throw new Error('MIRANTE_BIN and LEPTOS_SITE_ROOT must be set (cargo xtask test does)');
  const dataDir = mkdtempSync(join(tmpdir(), 'mirante-browser-'));
  const env = { ...process.env };
  // The embedded SQLite database under the fresh data dir, whatever the caller's shell has.
  delete env.DATABASE_URL;
  delete env.MIRANTE_CATALOG;
  const child = spawn(BIN, ['serve'], {
    env: {
      ...env,
      MIRANTE_BIND: '127.0.0.1:0',
      MIRANTE_DATA_DIR: dataDir,
      LEPTOS_SITE_ROOT: SITE_ROOT,
      RUST_LOG: 'info',
      NO_COLOR: '1',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`portal did not start in 60 s:\n${log}`)), 60_000);
    const onData = (chunk) => {
      log += chunk.toString();
      const m = log.match(/listening http\.addr=(127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`portal exited with ${code}:\n${log}`));
    });
  });
  return {
    url,
    dataDir,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
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

/** Collects console errors and failed requests of a page, to assert there are none. */
export function watchErrors(page) {
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('requestfailed', (req) => errors.push(`requestfailed: ${req.url()} ${req.failure()?.errorText}`));
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
