import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { buildPageHistory, HOSTILE_NAME, RTL_NAME, UUID } from './page-history.js';

/**
 * Every page in a real headless Chromium (Debian's), at a phone's and a desktop's width, light and
 * dark: what a person reads, no console error (a CSP violation is one), no failed request, no
 * serious or critical axe violation, and a screenshot of each into test-results/pages/ (ignored by
 * git). Without the browser this fails: CI installs it, and nothing here may skip silently.
 */

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'pages');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface PageCase {
  name: string;
  path: string;
  /** Text a person must be able to read on the page. */
  reads: string[];
}

const CASES: PageCase[] = [
  {
    name: 'status',
    path: '/',
    reads: ['The mirror at a glance', 'The last run failed', 'Zoë', 'Latest changes'],
  },
  {
    name: 'timeline',
    path: '/changes/',
    reads: [
      'Zoë joined as QA engineer',
      'qa engineer',
      'QA lead',
      'Kate left',
      'Seán returned',
      RTL_NAME,
      HOSTILE_NAME,
    ],
  },
  { name: 'coworkers', path: '/coworkers/?status=all', reads: ['José Álvarez', 'Kate', 'Seán', 'left'] },
  {
    name: 'coworker',
    path: `/coworkers/${UUID.jose}/`,
    reads: ['José Álvarez', 'As listed now', 'Every version', 'qa engineer', 'QA lead'],
  },
  {
    name: 'coworker-twice',
    path: `/coworkers/${UUID.ada}/`,
    reads: ['listed 2 times', 'Engineer (second listing)'],
  },
  { name: 'team', path: '/team/?run=1', reads: ['The team as it was', 'Kate', 'Seán', 'Designer'] },
  { name: 'runs', path: '/runs/', reads: ['Runs', 'UPSTREAM_SCHEMA', 'succeeded'] },
  { name: 'run', path: '/runs/4/', reads: ['Run 4', 'failed', 'does not understand'] },
];

const VIEWS = [
  { width: 375, height: 800, colorScheme: 'light' as const },
  { width: 1280, height: 900, colorScheme: 'dark' as const },
  { width: 375, height: 800, colorScheme: 'dark' as const },
  { width: 1280, height: 900, colorScheme: 'light' as const },
];

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: string[] }[];
}

async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern (an injected
  // <script> would be refused, as it should be).
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    return axe.run(document);
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

describe('pages in a real browser', () => {
  let browser: Browser;
  let base = '';

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium fonts-dejavu-core)`,
      );
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    mkdirSync(SHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('every page reads right, loads cleanly and passes axe at 375 and 1280 px, light and dark', async () => {
    const history = await buildPageHistory();
    const mirror = await startMirror(history.store);
    base = mirror.url;
    for (const view of VIEWS) {
      const context = await browser.newContext({
        viewport: { width: view.width, height: view.height },
        colorScheme: view.colorScheme,
        timezoneId: 'America/New_York',
        locale: 'en-US',
      });
      try {
        for (const pageCase of CASES) {
          const page = await context.newPage();
          const problems: string[] = [];
          page.on('console', (message) => {
            if (message.type() === 'error') problems.push(`console: ${message.text()}`);
          });
          page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
          page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
          page.on('response', (response) => {
            if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
          });
          const label = `${pageCase.name} ${view.width}px ${view.colorScheme}`;
          const response = await page.goto(base + pageCase.path, { waitUntil: 'load' });
          expect(response?.status(), label).toBe(200);
          const text = await page.locator('body').innerText();
          for (const words of pageCase.reads) expect(text, `${label} reads "${words}"`).toContain(words);
          expect(await axeViolations(page), label).toEqual([]);
          expect(problems, label).toEqual([]);
          await page.screenshot({
            path: join(SHOTS, `${pageCase.name}-${view.width}-${view.colorScheme}.png`),
            fullPage: true,
          });
          await page.close();
        }
      } finally {
        await context.close();
      }
    }
    // Every thumbnail came from the media host, and nothing was loaded from anywhere else.
    expect(history.mediaServed.length).toBeGreaterThan(0);
  }, 180_000);

  it('takes the README screenshots (copied to docs/ by hand when the pages change)', async () => {
    const history = await buildPageHistory();
    const mirror = await startMirror(history.store);
    const shots: [string, string, { width: number; height: number }, 'light' | 'dark', boolean][] = [
      ['readme-timeline', '/changes/', { width: 1280, height: 720 }, 'light', false],
      ['readme-coworker', `/coworkers/${UUID.jose}/`, { width: 375, height: 800 }, 'dark', true],
    ];
    for (const [name, path, viewport, colorScheme, fullPage] of shots) {
      const context = await browser.newContext({
        viewport,
        colorScheme,
        timezoneId: 'Europe/Dublin',
        locale: 'en-GB',
      });
      try {
        const page = await context.newPage();
        await page.goto(mirror.url + path, { waitUntil: 'load' });
        await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
      } finally {
        await context.close();
      }
    }
  });

  it("times are shown in the reader's time zone", async () => {
    const history = await buildPageHistory();
    const mirror = await startMirror(history.store);
    const context = await browser.newContext({ timezoneId: 'Asia/Tokyo', locale: 'en-US' });
    try {
      const page = await context.newPage();
      await page.goto(`${mirror.url}/runs/`);
      const time = page.locator('td time').first();
      const iso = await time.getAttribute('datetime');
      const expected = new Intl.DateTimeFormat('en-US', {
        dateStyle: 'medium',
        timeStyle: 'short',
        timeZone: 'Asia/Tokyo',
      }).format(new Date(iso ?? ''));
      expect(await time.innerText()).toBe(expected);
    } finally {
      await context.close();
    }
  });
});
