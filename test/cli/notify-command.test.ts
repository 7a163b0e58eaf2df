import { describe, expect, it } from 'vitest';
import { runNotifyTest } from '../../src/cli/notify-actions.js';
import { loadConfig } from '../../src/config/load-config.js';
import { chatStandIn } from '../helpers/chat-stand-in.js';

describe('coworker-mirror notify test (issue 22)', () => {
  it('sends the sample to every target and says what each answered, URLs masked', async () => {
    const slack = await chatStandIn(() => null);
    const gone = await chatStandIn(() => null);
    gone.answer(404, {}, 'no_service');
    const limited = await chatStandIn(() => null);
    limited.answer(429, { 'retry-after': '30' }, 'rate limited');
    const config = loadConfig({
      NOTIFY_URLS: [
        `slack+${slack.url}/services/T0/B0/SECRET1`,
        `discord+${gone.url}/api/webhooks/1/SECRET2`,
        `ntfy+${limited.url}/SECRET3`,
      ].join(','),
      PUBLIC_BASE_URL: 'https://mirror.example.com',
    });
    const lines: string[] = [];
    const code = await runNotifyTest(config, 'UTC', (line) => lines.push(line));
    expect(code).toBe(1);
    expect(lines.map((l) => l.replace(/, \d+ ms$/, ''))).toEqual([
      `slack ${slack.url}/…: delivered, answered 200: ok`,
      `discord ${gone.url}/…: refused for good (the target would be disabled), answered 404: no_service`,
      `ntfy ${limited.url}/…: not delivered, would be retried, answered 429: rate limited (Retry-After 30 s)`,
    ]);
    expect(lines.join('\n')).not.toMatch(/SECRET/);
    const sample = JSON.parse(slack.requests[0]?.body ?? '{}') as { text: string };
    expect(sample.text).toBe('Test from the coworker mirror: Team page: 1 joined, 1 left, 1 changed');
  });

  it('with no target, says so and exits 2', async () => {
    const lines: string[] = [];
    expect(await runNotifyTest(loadConfig({}), 'UTC', (line) => lines.push(line))).toBe(2);
    expect(lines).toEqual(['NOTIFY_URLS names no target: nothing to test']);
  });
});
