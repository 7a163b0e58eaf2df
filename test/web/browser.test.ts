import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { WAIT_MS } from '../helpers/patience.js';
import { chromiumBrowser, missing } from '../helpers/requirements.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { oncePerFile, untilTestEnds, type Defer } from '../helpers/scope.js';
import { configuredTimeZone, localClock } from '../../src/web/time-zone.js';
import { buildPageHistory, HOSTILE_NAME, RTL_NAME, UUID } from './page-history.js';

/**
 * Every page in a real headless Chromium (Debian's), at a phone's and a desktop's width, light and
 * dark, one test each: what a person reads, no console error (a CSP violation is one), no failed
 * request, nothing loaded from anywhere but the mirror and the media host, no serious or critical
 * axe violation, and a screenshot of each into test-results/pages/ (ignored by git). Without the
 * browser the file skips saying so, and fails under REQUIRE_REFERENCE=1 (CI installs it).
 */

const CHROMIUM = chromiumBrowser();
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'pages');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface PageCase {
  name: string;
  path: string;
  /** Text a person must be able to read on the page. */
  reads: string[];
  /** The page shows thumbnails, loaded from the media host. */
  thumbnails: boolean;
}

const CASES: PageCase[] = [
  {
    name: 'status',
    path: '/',
    reads: ['The mirror at a glance', 'The last run failed', 'Zoë', 'Latest changes'],
    thumbnails: true,
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
    thumbnails: true,
  },
  {
    name: 'coworkers',
    path: '/coworkers/?status=all',
    reads: ['José Álvarez', 'Kate', 'Seán', 'left'],
    thumbnails: false,
  },
  {
    name: 'coworker',
    path: `/coworkers/${UUID.jose}/`,
    reads: ['José Álvarez', 'As listed now', 'Every version', 'qa engineer', 'QA lead'],
    thumbnails: true,
  },
  {
    name: 'coworker-twice',
    path: `/coworkers/${UUID.ada}/`,
    reads: ['listed 2 times', 'Engineer (second listing)', 'Appearance 2'],
    thumbnails: true,
  },
  {
    name: 'team',
    path: '/team/?run=1',
    reads: ['The team as it was', 'Kate', 'Seán', 'Designer'],
    thumbnails: true,
  },
  { name: 'runs', path: '/runs/', reads: ['Runs', 'UPSTREAM_SCHEMA', 'succeeded'], thumbnails: false },
  { name: 'run', path: '/runs/4/', reads: ['Run 4', 'failed', 'does not understand'], thumbnails: false },
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

/**
 * Every view on SQLite; on PostgreSQL one, since a page's layout is the store's no more than its
 * bytes are: there the pages are read from the other store, in the browser, at one width.
 */
const VIEWS_OF = { sqlite: VIEWS, postgres: VIEWS.slice(-1) };

describe.skipIf(missing(CHROMIUM)).each(STORE_KINDS)('pages in a real browser on %s', (kind) => {
  const fresh = storeMaker(kind);
  const rig = oncePerFile(async (defer) => {
    const history = await buildPageHistory(defer, await fresh(defer));
    const mirror = await startMirror(history.store, { defer });
    const browser = await chromium.launch({ executablePath: CHROMIUM.found ?? '', args: ['--no-sandbox'] });
    defer(() => browser.close());
    mkdirSync(SHOTS, { recursive: true });
    return { history, mirror, browser };
  });

  /** A browser context whose waits last WAIT_MS, closed by `defer`. */
  async function newContext(options: BrowserContextOptions, defer: Defer): Promise<BrowserContext> {
    const context = await rig().browser.newContext(options);
    context.setDefaultTimeout(WAIT_MS);
    context.setDefaultNavigationTimeout(WAIT_MS);
    defer(() => context.close());
    return context;
  }

  describe.each(VIEWS_OF[kind])('at $width px, $colorScheme', (view) => {
    // One context per view, as a reader's browser; each test opens its own page in it.
    const viewContext = oncePerFile((defer) =>
      newContext(
        {
          viewport: { width: view.width, height: view.height },
          colorScheme: view.colorScheme,
          timezoneId: 'America/New_York',
          locale: 'en-US',
        },
        defer,
      ),
    );

    it.each(CASES.map((c) => [c.name, c] as const))(
      '%s reads right, loads cleanly and passes axe',
      async (_name, pageCase) => {
        const { history, mirror } = rig();
        const page = await viewContext().newPage();
        onTestFinished(() => page.close());
        const problems: string[] = [];
        const origins = new Set<string>();
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(`console: ${message.text()}`);
        });
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
        page.on('request', (request) => origins.add(new URL(request.url()).origin));
        page.on('response', (response) => {
          if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
        });
        const response = await page.goto(mirror.url + pageCase.path, { waitUntil: 'load' });
        expect(response?.status()).toBe(200);
        const text = await page.locator('body').innerText();
        for (const words of pageCase.reads) expect(text, `reads "${words}"`).toContain(words);
        expect(await axeViolations(page)).toEqual([]);
        expect(problems).toEqual([]);
        const media = new URL(history.mediaUrl).origin;
        expect([...origins].sort()).toEqual(
          (pageCase.thumbnails ? [new URL(mirror.url).origin, media] : [new URL(mirror.url).origin]).sort(),
        );
        await page.screenshot({
          path: join(
            SHOTS,
            `${pageCase.name}-${view.width}-${view.colorScheme}${kind === 'sqlite' ? '' : `-${kind}`}.png`,
          ),
          fullPage: true,
        });
      },
    );
  });

  it("times are shown in the mirror's one zone (TZ), named on the page; the reader's own clock is the tooltip", async () => {
    const context = await newContext({ timezoneId: 'Asia/Tokyo', locale: 'en-US' }, untilTestEnds);
    const page = await context.newPage();
    await page.goto(`${rig().mirror.url}/runs/`);
    const time = page.locator('td time').first();
    const iso = await time.getAttribute('datetime');
    expect(iso).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await time.innerText()).toBe(localClock(iso ?? '', configuredTimeZone()));
    expect(await page.locator('footer').innerText()).toBe(`Times are in ${configuredTimeZone()}.`);
    const reader = new Intl.DateTimeFormat('en-US', {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
      timeZone: 'Asia/Tokyo',
    }).format(new Date(iso ?? ''));
    expect(await time.getAttribute('title')).toBe(reader);
  });
});
