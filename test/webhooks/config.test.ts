import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';
import { maskUrlCredentials } from '../../src/config/load-config.js';
import { endpointLabel, withoutUrl } from '../../src/webhooks/mask-url.js';
import { retryDelayMs } from '../../src/outbox/retry-delay.js';
import { newSecret } from '../helpers/webhook-receiver.js';

describe('WEBHOOK_* settings', () => {
  it('defaults: no endpoints, unsigned, every event, the Standard Webhooks schedule, 15 s', () => {
    expect(loadConfig({}).webhooks).toEqual({
      urls: [],
      secret: null,
      events: ['coworkers.changed', 'sync.failed', 'sync.recovered'],
      failureThreshold: 3,
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      timeoutMs: 15_000,
    });
  });

  it('parses lists', () => {
    const secret = newSecret();
    const config = loadConfig({
      WEBHOOK_URLS: ' https://a.example/hook , https://b.example/x?token=1 ',
      WEBHOOK_SECRET: secret,
      WEBHOOK_EVENTS: 'sync.failed',
      WEBHOOK_RETRY_SCHEDULE: '1s, 1m',
    });
    expect(config.webhooks).toMatchObject({
      urls: ['https://a.example/hook', 'https://b.example/x?token=1'],
      secret,
      events: ['sync.failed'],
      retryScheduleMs: [1_000, 60_000],
    });
  });

  it.each([
    ['WEBHOOK_URLS', 'ftp://a.example/hook'],
    ['WEBHOOK_SECRET', 'whsec_not base64!'],
    ['WEBHOOK_SECRET', 'whsec_c2hvcnQ='],
    ['WEBHOOK_EVENTS', 'coworkers.changed,run.finished'],
    ['WEBHOOK_FAILURE_THRESHOLD', '0'],
    ['WEBHOOK_RETRY_SCHEDULE', '5s,soon'],
    ['WEBHOOK_TIMEOUT', 'forever'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      expect((error as ConfigError).issues.map((i) => i.name)).toEqual([name]);
    }
  });

  it('never echoes a refused secret whole: the message names the variable and the expected form', () => {
    // Asserted outside the catch: had loadConfig accepted the secret, this test passed unseen.
    let problem: string | undefined;
    try {
      loadConfig({ WEBHOOK_SECRET: 'whsec_c2hvcnQ=' });
    } catch (error) {
      problem = (error as ConfigError).issues[0]?.problem;
    }
    expect(problem).toMatch(/^got 14 characters, not shown: expected whsec_ followed by the base64/);
    expect(problem).not.toContain('c2hvcnQ');
  });
});

describe('helpers', () => {
  it.each([
    ['https://user:pw@example.com', 'https://user:***@example.com'],
    ['https://user:pw@example.com/base/', 'https://user:***@example.com/base/'],
    ['https://example.com/hook?token=1', 'https://example.com/hook?token=1'],
  ])('masks the credentials of %s', (url, masked) => expect(maskUrlCredentials(url)).toBe(masked));

  it.each([
    ['https://api.example.com/build_hooks/5f1e2d3c4b5a', 'https://api.example.com/…'],
    ['https://user:pw@hooks.example.com/?token=1', 'https://hooks.example.com/…'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'],
  ])('shows endpoint %s as %s: a deploy hook token never reaches the API or the logs', (url, label) =>
    expect(endpointLabel(url)).toBe(label),
  );

  it.each([
    [
      'connect ECONNRESET https://api.example.com/build_hooks/5f1e2d3c4b5a?t=1',
      'connect ECONNRESET https://api.example.com/…',
    ],
    ['request to /build_hooks/5f1e2d3c4b5a?t=1 failed', 'request to /… failed'],
    ['getaddrinfo ENOTFOUND api.example.com', 'getaddrinfo ENOTFOUND api.example.com'],
  ])('keeps the token out of an error that quotes the URL: %s', (message, shown) =>
    expect(withoutUrl(message, 'https://api.example.com/build_hooks/5f1e2d3c4b5a?t=1')).toBe(shown),
  );

  it('jitters each retry within ±20 % of the schedule and ends after its last entry', () => {
    const schedule = [1_000, 60_000];
    expect(retryDelayMs(schedule, 1, () => 0)).toBe(800);
    expect(retryDelayMs(schedule, 1, () => 1)).toBe(1_200);
    expect(retryDelayMs(schedule, 2, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(schedule, 3, () => 0.5)).toBeNull();
  });
});

describe('the logger', () => {
  it('redacts the webhook secret of a logged config', async () => {
    const { PassThrough } = await import('node:stream');
    const { createLogger } = await import('../../src/logger.js');
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const secret = newSecret();
    createLogger({ level: 'info', pretty: false, destination: stream }).info(
      { config: loadConfig({ WEBHOOK_SECRET: secret }) },
      'config',
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(text).toContain('"secret":"[redacted]"');
    expect(text).not.toContain(secret.slice(6));
  });
});
