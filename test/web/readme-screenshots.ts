/**
 * `npm run docs:screenshots`: retakes the README's screenshots (docs/timeline.png and
 * docs/coworker.png) in Debian's headless Chromium, over the page tests' history. Run it when the
 * pages change and commit the images; it asserts nothing, so it is no test.
 */
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startMirror } from '../helpers/mirror-server.js';
import { ROOT } from '../helpers/process.js';
import { chromiumBrowser } from '../helpers/requirements.js';
import { cleanupScope } from '../helpers/scope.js';
import { buildPageHistory, UUID } from './page-history.js';

interface Shot {
  file: string;
  path: string;
  viewport: { width: number; height: number };
  colorScheme: 'light' | 'dark';
  fullPage: boolean;
}

const SHOTS: Shot[] = [
  {
    file: 'timeline.png',
    path: '/changes/',
    viewport: { width: 1280, height: 720 },
    colorScheme: 'light',
    fullPage: false,
  },
  {
    file: 'coworker.png',
    path: `/coworkers/${UUID.jose}/`,
    viewport: { width: 375, height: 800 },
    colorScheme: 'dark',
    fullPage: true,
  },
];

const executablePath = chromiumBrowser().found;
if (executablePath === null) throw new Error(`no Chromium: ${chromiumBrowser().install}`);
const scope = cleanupScope();
try {
  const history = await buildPageHistory(scope.defer);
  const mirror = await startMirror(history.store, { defer: scope.defer });
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  scope.defer(() => browser.close());
  for (const shot of SHOTS) {
    const context = await browser.newContext({
      viewport: shot.viewport,
      colorScheme: shot.colorScheme,
      timezoneId: 'Europe/Dublin',
      locale: 'en-GB',
    });
    const page = await context.newPage();
    await page.goto(mirror.url + shot.path, { waitUntil: 'load' });
    const file = join(ROOT, 'docs', shot.file);
    await page.screenshot({ path: file, fullPage: shot.fullPage });
    await context.close();
    console.log(`wrote ${file}`);
  }
} finally {
  await scope.close();
}
