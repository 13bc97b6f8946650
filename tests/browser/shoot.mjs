// Screenshots of portal pages for a person to look at: node shoot.mjs BASE_URL OUT_DIR PATH...
import { launchBrowser, watchErrors } from './portal.mjs';

const [base, out, ...paths] = process.argv.slice(2);
const browser = await launchBrowser();
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
    const name = path.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '') || 'home';
    await page.screenshot({ path: `${out}/${name}.png`, fullPage: true });
    console.log(`${path} -> ${out}/${name}.png ${errors.length ? 'ERRORS: ' + errors.join('; ') : ''}`);
    await page.close();
  }
} finally {
  await browser.close();
}
