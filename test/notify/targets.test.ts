import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';
import { EndpointKeys } from '../../src/db/endpoint-keys.js';
import {
  keyedTargets,
  maskTargetUrl,
  parseTarget,
  splitTargets,
  targetDigest,
} from '../../src/notify/targets.js';

const SLACK = 'https://hooks.slack.com/services/T0000/B0000/SlackSecretToken123';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('NOTIFY_URLS', () => {
  it.each([
    [SLACK, 'slack'],
    ['https://discord.com/api/webhooks/1/tok', 'discord'],
    ['https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t', 'gchat'],
    ['teams+https://prod-01.westeurope.logic.azure.com/workflows/abc?sig=s', 'teams'],
    ['mattermost+http://chat.internal:8065/hooks/xyz', 'mattermost'],
    ['ntfy+https://ntfy.sh/team-page-changes', 'ntfy'],
    ['slack+http://127.0.0.1:9999/relay', 'slack'],
    ['smtp://user:pw@mail.example.com:587/?from=mirror@example.com&to=a@example.com,b@example.com', 'email'],
  ])('%s is a %s target', (entry, kind) => {
    const target = parseTarget(entry);
    expect(typeof target === 'string' ? target : target.kind).toBe(kind);
  });

  it('reads an e-mail target whole, its port defaulting by scheme', () => {
    expect(parseTarget('smtps://u%40x:p%2Cw@mail.example.com/?from=m@example.com&to=a@example.com')).toEqual({
      kind: 'email',
      digest: targetDigest('smtps://u%40x:p%2Cw@mail.example.com/?from=m@example.com&to=a@example.com'),
      label: 'smtps://…@mail.example.com/… to a@example.com',
      secure: true,
      host: 'mail.example.com',
      port: 465,
      user: 'u@x',
      password: 'p,w',
      from: 'm@example.com',
      to: ['a@example.com'],
    });
  });

  it('splits on commas that start a new target, not those between recipients', () => {
    expect(
      splitTargets(`${SLACK}, smtp://h:25/?from=m@x.io&to=a@x.io,b@x.io ,ntfy+https://ntfy.sh/t`),
    ).toEqual([SLACK, 'smtp://h:25/?from=m@x.io&to=a@x.io,b@x.io', 'ntfy+https://ntfy.sh/t']);
  });

  it('masks the path, query and credentials, where the secrets of a webhook live', () => {
    expect(maskTargetUrl(SLACK)).toBe('https://hooks.slack.com/…');
    expect(maskTargetUrl('smtp://user:pw@mail.example.com:587/?from=a@b.c')).toBe(
      'smtp://…@mail.example.com:587/…',
    );
    expect(maskTargetUrl('http://relay.internal:8080')).toBe('http://relay.internal:8080');
  });

  it('serialises without its URL or password (a log line, the config as JSON)', () => {
    const config = loadConfig({
      NOTIFY_URLS: `${SLACK},smtp://user:SECRETPW@mail.example.com/?from=m@example.com&to=a@example.com`,
    });
    const json = JSON.stringify(config);
    expect(json).not.toContain('SlackSecretToken123');
    expect(json).not.toContain('SECRETPW');
    // Nor its plain digest: a guessed URL could be tested against it.
    expect(json).not.toContain(targetDigest(SLACK));
    expect(JSON.parse(JSON.stringify(config.notify.urls[0]))).toEqual({
      kind: 'slack',
      label: 'slack https://hooks.slack.com/…',
    });
    const keys = EndpointKeys.unmatched();
    const [keyed] = keyedTargets(config.notify.urls, keys);
    expect(JSON.parse(JSON.stringify(keyed))).toEqual({
      kind: 'slack',
      id: keys.notifyTarget(targetDigest(SLACK)),
      label: 'slack https://hooks.slack.com/…',
    });
  });

  it('has an id keyed under the store: stable there, another in another store, never the plain digest', () => {
    const [one, other] = [EndpointKeys.unmatched(), EndpointKeys.unmatched()];
    const digest = targetDigest(SLACK);
    expect(one.notifyTarget(digest)).toBe(one.notifyTarget(targetDigest(SLACK)));
    expect(one.notifyTarget(digest)).not.toBe(one.notifyTarget(targetDigest(`${SLACK}x`)));
    expect(one.notifyTarget(digest)).not.toBe(other.notifyTarget(digest));
    expect(one.notifyTarget(digest)).not.toBe(digest);
    expect(one.notifyTarget(digest)).toMatch(/^[0-9a-f]{24}$/);
  });

  it('is parsed into the Config with its events and digest; links use PUBLIC_BASE_URL', () => {
    const config = loadConfig({
      NOTIFY_URLS: `${SLACK},ntfy+https://ntfy.sh/t`,
      NOTIFY_EVENTS: 'changes,failures',
      NOTIFY_DIGEST: 'daily@08:30',
      PUBLIC_BASE_URL: 'https://mirror.example.com/',
    });
    expect(config.notify.urls.map((t) => [t.kind, t.label])).toEqual([
      ['slack', 'slack https://hooks.slack.com/…'],
      ['ntfy', 'ntfy https://ntfy.sh/…'],
    ]);
    expect(config.notify.events).toEqual(['changes', 'failures']);
    expect(config.notify.digest).toEqual({ every: 'day', at: '08:30' });
    expect(config.server.publicBaseUrl).toBe('https://mirror.example.com');
  });

  it('defaults to no targets, every event, one message per run', () => {
    const config = loadConfig({});
    expect(config.notify.urls).toEqual([]);
    expect(config.notify.events).toEqual(['changes', 'failures', 'recoveries']);
    expect(config.notify.digest).toEqual({ every: 'run' });
  });

  it.each([
    [
      'foo+https://example.com/hook/SECRET',
      'entry 1 of 1: got 35 characters, not shown: unknown kind "foo": expected one of slack, discord',
    ],
    [
      'https://example.com/hook/SECRET',
      'entry 1 of 1: got 31 characters, not shown: the service is not named: prefix the URL with one of slack+',
    ],
    [
      'smtp://u:SECRET@mail.example.com/?to=a@example.com',
      'entry 1 of 1: got 50 characters, not shown: an e-mail target needs ?from=<address>',
    ],
    [
      `${SLACK},ntfy+https://ntfy.sh/`,
      'entry 2 of 2: got 21 characters, not shown: an ntfy target needs a topic: ntfy+https://ntfy.sh/<topic>',
    ],
    [
      'not a url SECRET',
      'entry 1 of 1: got 16 characters, not shown: expected a chat webhook URL (kind+https://…) or an smtp(s):// URL',
    ],
  ])('refuses %s naming the entry by its place, never its text', (value, problem) => {
    const message = configError({ NOTIFY_URLS: value });
    expect(message).toContain('NOTIFY_URLS');
    expect(message).toContain(problem);
    expect(message).not.toContain('SECRET');
    expect(message).not.toContain('SlackSecretToken123');
  });
});
