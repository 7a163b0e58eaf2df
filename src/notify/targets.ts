import { createHash } from 'node:crypto';
import { z } from 'zod';
import { notifyEventTypes, type NotifyEventType } from './event-types.js';

// A leaf the settings table reads (NOTIFY_URLS is parsed here): it imports nothing of src.

/** The services a message can go to; e-mail covers `smtp://` and `smtps://`. */
export const notifyKinds = ['slack', 'discord', 'teams', 'gchat', 'mattermost', 'ntfy', 'email'] as const;
export type NotifyKind = (typeof notifyKinds)[number];

const CHAT_KINDS = new Set<string>(notifyKinds.filter((k) => k !== 'email'));

/** Hosts whose webhooks need no `kind+` prefix: the host says which service it is. */
const WELL_KNOWN_HOSTS: Record<string, NotifyKind> = {
  'hooks.slack.com': 'slack',
  'discord.com': 'discord',
  'discordapp.com': 'discord',
  'chat.googleapis.com': 'gchat',
};

interface TargetBase {
  /**
   * The URL's plain digest, in memory only: a store keys it into the target's id (`keyedTargets`),
   * so two settings naming the same URL agree, and the database holds nothing a guessed URL can be
   * tested against. Never shown, logged or stored.
   */
  digest: string;
  /** The URL with its secret parts hidden: what logs, pages, errors and the CLI show. */
  label: string;
}

export interface ChatTarget extends TargetBase {
  kind: Exclude<NotifyKind, 'email'>;
  /** The URL to POST to (the `kind+` prefix removed). A secret: never logged or stored. */
  url: string;
}

export interface EmailTarget extends TargetBase {
  kind: 'email';
  secure: boolean;
  host: string;
  port: number;
  user: string | null;
  /** A secret: never logged or stored. */
  password: string | null;
  from: string;
  to: string[];
}

export type NotifyTarget = ChatTarget | EmailTarget;

/** A target URL's plain digest (domain-separated SHA-256, 24 hex): what a store keys into its id. */
export function targetDigest(url: string): string {
  return createHash('sha256').update('coworker-mirror target\0').update(url).digest('hex').slice(0, 24);
}

/**
 * A URL as shown to people: scheme, host and port; the path (where webhook tokens live), the
 * query and any user:password hidden, with a short form of the id so two targets on one host differ.
 */
export function maskTargetUrl(text: string): string {
  const [, prefix = '', rest = text] = /^([a-z][a-z0-9]*\+)?(.*)$/is.exec(text) ?? [];
  if (!URL.canParse(rest)) return `not a URL, ${text.length} characters`;
  const url = new URL(rest);
  const credentials = url.username !== '' || url.password !== '' ? '…@' : '';
  const hidden = url.pathname.replace(/\/+$/, '') !== '' || url.search !== '' ? '/…' : '';
  return `${prefix}${url.protocol}//${credentials}${url.host}${hidden}`;
}

const EMAIL = /^[^\s@,<>]+@[^\s@,<>]+$/;
const EMAIL_FORM = 'smtp(s)://user:password@host:587/?from=a@example.com&to=b@example.com';

function emailTarget(entry: string, url: URL): EmailTarget | string {
  const from = url.searchParams.get('from') ?? '';
  const to = (url.searchParams.get('to') ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  if (url.hostname === '') return `names no mail server: expected ${EMAIL_FORM}`;
  if (!EMAIL.test(from)) return `an e-mail target needs ?from=<address>: ${EMAIL_FORM}`;
  if (to.length === 0 || !to.every((a) => EMAIL.test(a))) {
    return `an e-mail target needs &to=<address>[,<address>…]: ${EMAIL_FORM}`;
  }
  const secure = url.protocol === 'smtps:';
  return {
    kind: 'email',
    digest: targetDigest(entry),
    label: `${maskTargetUrl(entry)} to ${to.join(', ')}`,
    secure,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    user: url.username === '' ? null : decodeURIComponent(url.username),
    password: url.password === '' ? null : decodeURIComponent(url.password),
    from,
    to,
  };
}

function chatTarget(entry: string): ChatTarget | string {
  const prefixed = /^([a-z][a-z0-9]*)\+(https?:\/\/.*)$/is.exec(entry);
  const url = prefixed?.[2] ?? entry;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    return 'expected a chat webhook URL (kind+https://…) or an smtp(s):// URL';
  }
  const parsed = new URL(url);
  const named = prefixed?.[1]?.toLowerCase();
  const kind = named ?? WELL_KNOWN_HOSTS[parsed.hostname.toLowerCase()];
  if (kind === undefined) {
    return `the service is not named: prefix the URL with one of ${[...CHAT_KINDS].map((k) => `${k}+`).join(', ')}`;
  }
  if (!CHAT_KINDS.has(kind)) {
    return `unknown kind "${kind}": expected one of ${[...CHAT_KINDS].join(', ')}, or smtp:// / smtps://`;
  }
  if (kind === 'ntfy' && parsed.pathname.replace(/\/+$/, '').split('/').length < 2) {
    return 'an ntfy target needs a topic: ntfy+https://ntfy.sh/<topic>';
  }
  return {
    kind: kind as ChatTarget['kind'],
    digest: targetDigest(url),
    label: `${kind} ${maskTargetUrl(url)}`,
    url,
  };
}

/**
 * A target serialised (a log line, the config in JSON, an API answer) shows its kind, label and,
 * once keyed, its id only: the URL and password stay in memory, where the sender needs them.
 */
function masked<T extends NotifyTarget & { id?: string }>(target: T): T {
  const { kind, id, label } = target;
  const shown = id === undefined ? { kind, label } : { kind, id, label };
  return Object.defineProperty(target, 'toJSON', { value: () => shown, enumerable: false });
}

/** What keys a target's digest into its id in one store: `Store['endpointKeys']`. */
export interface TargetKeys {
  notifyTarget(digest: string): string;
}

/**
 * A configured target with its id in the store at hand: its endpoint there is `notify:<id>`, and
 * `notify enable <id>` names it.
 */
export type KeyedTarget = NotifyTarget & { id: string };

/** NOTIFY_URLS' targets with their ids in the store whose keys these are. */
export function keyedTargets(targets: readonly NotifyTarget[] | null, keys: TargetKeys): KeyedTarget[] {
  return (targets ?? []).map((target) => masked({ ...target, id: keys.notifyTarget(target.digest) }));
}

/** One entry of NOTIFY_URLS as a target, or why it is not one (the entry itself is not quoted). */
export function parseTarget(entry: string): NotifyTarget | string {
  let target: NotifyTarget | string;
  if (/^smtps?:\/\//i.test(entry)) {
    target = URL.canParse(entry)
      ? emailTarget(entry, new URL(entry))
      : `expected a valid smtp(s):// URL: ${EMAIL_FORM}`;
  } else {
    target = chatTarget(entry);
  }
  return typeof target === 'string' ? target : masked(target);
}

/**
 * NOTIFY_URLS into entries: commas separate targets, but an e-mail target's `to=a@x,b@y` holds
 * commas too, so an entry ends only at a comma followed by the next `scheme://`.
 */
export function splitTargets(text: string): string[] {
  return text
    .split(/,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * NOTIFY_URLS: comma-separated targets. A refused entry is named by its place (the loader never
 * quotes it: the settings table marks the setting secret), the problem saying what is wrong.
 */
export const notifyTargetList = z
  .string()
  .nullable()
  .transform((text, ctx) => {
    const targets: NotifyTarget[] = [];
    const entries = text === null ? [] : splitTargets(text);
    for (const [index, entry] of entries.entries()) {
      const target = parseTarget(entry);
      if (typeof target === 'string') {
        const params = { entry: { index, count: entries.length, text: entry } };
        ctx.addIssue({ code: 'custom', message: target, params });
        continue;
      }
      if (!targets.some((t) => t.digest === target.digest)) targets.push(target);
    }
    return ctx.issues.length > 0 ? z.NEVER : targets;
  });

export { notifyEventTypes, type NotifyEventType } from './event-types.js';

export const notifyEventList = z.string().transform((text, ctx) => {
  const events = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const unknown = events.filter((e) => !(notifyEventTypes as readonly string[]).includes(e));
  if (unknown.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown event ${unknown.join(', ')}; expected some of ${notifyEventTypes.join(', ')}`,
    });
    return z.NEVER;
  }
  return [...new Set(events)] as NotifyEventType[];
});

export type NotifyDigest = { every: 'run' } | { every: 'hour' } | { every: 'day'; at: string };

/** NOTIFY_DIGEST: `run`, `hourly`, `daily` (at 09:00) or `daily@HH:MM`, in the configured TZ. */
export const notifyDigest = z.string().transform((text, ctx): NotifyDigest => {
  const value = text.trim().toLowerCase();
  if (value === 'run') return { every: 'run' };
  if (value === 'hourly') return { every: 'hour' };
  const daily = /^daily(?:@([01]\d|2[0-3]):([0-5]\d))?$/.exec(value);
  if (daily) return { every: 'day', at: daily[1] ? `${daily[1]}:${daily[2]}` : '09:00' };
  ctx.addIssue({ code: 'custom', message: 'expected run, hourly, daily or daily@HH:MM' });
  return z.NEVER;
});
