import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { FAILURES_NAMED } from '../../src/media/mirror-media.js';
import { mediaRefs } from '../../src/media/media-refs.js';
import type { SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { MemoryLog, type LogLine } from '../fuzz/memory-log.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { mediaRig } from './harness.js';

const WARN = 40;
const DEBUG = 20;

/** A logger at `level` whose lines the test reads back. */
function capturedLogger(level: 'info' | 'debug') {
  const log = new MemoryLog();
  return { log, logger: createLogger({ level, pretty: false, destination: log }) };
}

/** A line without its time. */
function stable(line: LogLine): Record<string, unknown> {
  const { time, ...rest } = line;
  expect(typeof time).toBe('number');
  return rest;
}

/** The listing's distinct media URLs in listing order: the order the run fetches and names them. */
function mediaInListingOrder(upstream: SimulatedUpstream): string[] {
  return [...new Set(upstream.data.entries().flatMap((entry) => mediaRefs(entry).map((r) => r.url)))];
}

describe.each(STORE_KINDS)('media failures in the log on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('regression: a run whose every media URL fails logs one summary line (count by code, the first URLs), not one per URL', async () => {
    const rig = await mediaRig({}, await fresh());
    rig.host.fail('*', 404);
    const urls = mediaInListingOrder(rig.upstream);
    expect(urls.length).toBeGreaterThan(FAILURES_NAMED);
    const { log, logger } = capturedLogger('debug');
    const summary = await rig.sync({}, logger);
    expect(summary.media).toEqual({ fetched: 0, revalidated: 0, failed: urls.length, bytes: 0 });

    const lines = log.lines();
    expect(lines.filter((l) => l.level >= WARN).map(stable)).toEqual([
      {
        level: WARN,
        name: 'coworker-mirror',
        runId: summary.runId,
        module: 'media',
        msg: 'media not mirrored this run',
        failed: urls.length,
        of: urls.length,
        codes: { MEDIA_HTTP_STATUS: urls.length },
        media: {
          failures: urls
            .slice(0, FAILURES_NAMED)
            .map((url) => ({ url, code: 'MEDIA_HTTP_STATUS', reason: 'answered 404' })),
        },
      },
    ]);
    // Each URL's own line is still there for whoever asks for debug.
    const perUrl = lines.filter((l) => l.msg === 'media URL not mirrored');
    expect(perUrl.every((l) => l.level === DEBUG)).toBe(true);
    expect(perUrl.map((l) => (l.media as { url: string }).url).sort()).toEqual([...urls].sort());
  });

  it('regression: a run with failures of several kinds counts each code once in one line; a clean run logs none', async () => {
    const rig = await mediaRig({}, await fresh());
    const urls = mediaInListingOrder(rig.upstream);
    const [missing, broken, mislabelled] = [
      urls.find((u) => u.endsWith('.png')),
      urls.find((u) => u.endsWith('.webp')),
      urls.find((u) => u.endsWith('.jpg')),
    ];
    if (!missing || !broken || !mislabelled) throw new Error(`no png, webp and jpg among ${urls.join(' ')}`);
    rig.host.fail(missing, 404);
    rig.host.fail(broken, 503);
    const png = rig.host.fileAt(missing);
    if (!png) throw new Error(missing);
    rig.host.override(mislabelled, { bytes: png.bytes, contentType: 'image/jpeg' });
    const { log, logger } = capturedLogger('info');
    const summary = await rig.sync({}, logger);
    expect(summary.media).toMatchObject({ fetched: urls.length - 3, failed: 3 });
    const byUrl = (a: { url: string }, b: { url: string }) => urls.indexOf(a.url) - urls.indexOf(b.url);
    expect(
      log
        .lines()
        .filter((l) => l.level >= WARN)
        .map(stable),
    ).toEqual([
      {
        level: WARN,
        name: 'coworker-mirror',
        runId: summary.runId,
        module: 'media',
        msg: 'media not mirrored this run',
        failed: 3,
        of: urls.length,
        codes: { MEDIA_HTTP_STATUS: 2, MEDIA_TYPE_MISMATCH: 1 },
        media: {
          failures: [
            { url: missing, code: 'MEDIA_HTTP_STATUS', reason: 'answered 404' },
            { url: broken, code: 'MEDIA_HTTP_STATUS', reason: 'answered 503' },
            {
              url: mislabelled,
              code: 'MEDIA_TYPE_MISMATCH',
              reason: 'declared image/jpeg but the bytes are png',
            },
          ].sort(byUrl),
        },
      },
    ]);

    rig.host.fail(missing, null);
    rig.host.fail(broken, null);
    rig.host.override(mislabelled, null);
    const clean = capturedLogger('info');
    const again = await rig.sync({}, clean.logger);
    expect(again.media).toMatchObject({ fetched: 3, failed: 0 });
    expect(clean.log.lines().filter((l) => l.level >= WARN)).toEqual([]);
  });
});
