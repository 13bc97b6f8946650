// Screenshots of portal pages for a person to look at: node shoot.mjs BASE_URL OUT_DIR PATH...
// SHOOT_AS picks the development user (default: the admin), SHOOT_WIDTH the viewport's width
// (default 1366; 390 for a phone) and SHOOT_LANG the language (en or pt-BR).
import { launchBrowser, watchErrors } from './portal.mjs';

const [base, out, ...paths] = process.argv.slice(2);
const width = Number(process.env.SHOOT_WIDTH ?? 1366);
const browser = await launchBrowser({ viewport: { width, height: width < 600 ? 844 : 900 } });
if (process.env.SHOOT_LANG) {
  await browser.context.addCookies([{ name: 'mirante_lang', value: process.env.SHOOT_LANG, url: base }]);
}
try {
  // Sign in through the development sign-in when the portal asks for it.
  const login = await browser.context.newPage();
  await login.goto(base + '/', { waitUntil: 'load' });
  const devUser = login.locator('button', { hasText: process.env.SHOOT_AS ?? 'Admin' }).first();
  if (await devUser.count()) {
    await devUser.click();
    await login.waitForLoadState('load');
  }
  await login.close();
  for (const path of paths) {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(base + path, { waitUntil: 'networkidle' });
    const name = `${path.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '') || 'home'}-${width}${process.env.SHOOT_LANG ? '-' + process.env.SHOOT_LANG : ''}`;
    await page.screenshot({ path: `${out}/${name}.png`, fullPage: true });
    console.log(`${path} -> ${out}/${name}.png ${errors.length ? 'ERRORS: ' + errors.join('; ') : ''}`);
    await page.close();
  }
} finally {
  await browser.close();
}
