import {
  countChanges,
  describeChange,
  phraseText,
  runTitle,
  whoWords,
  type ChangeFacts,
} from './describe-change.js';
import { isolatedText } from '../text/bidi.js';
import { clockFormat } from '../time/date-formats.js';

/** One sentence of a message: the name (a link to the coworker's page) and what happened. */
export interface MessageLine {
  /** The name, isolated (`isolatedText`). */
  who: string;
  whoUrl: string | null;
  /** After the name: " joined as QA engineer", ": post 'a' → 'b'", each upstream piece isolated. */
  rest: string;
  /** A thumbnail the mirror holds, for services that show images. */
  imageUrl: string | null;
}

export type MessageEvent = 'changes' | 'failures' | 'recoveries' | 'test';

/**
 * A message written for people, before any service's format: every format renders this, escaping
 * each part for its own markup. Upstream text lives only in `lines` and a failure's `summary`
 * (never in the title), each piece of it isolated there (`isolatedText`): chat, mail and ntfy are
 * plain text to Unicode's bidi algorithm, so one isolation holds for every format.
 */
export interface NotifyMessage {
  event: MessageEvent;
  title: string;
  /** A sentence that is not about one coworker (a first listing, failures, recoveries, the test). */
  summary: string | null;
  lines: MessageLine[];
  /** "and 37 more", with a link to where they are all listed. */
  more: { count: number; url: string | null } | null;
  link: { label: string; url: string } | null;
  /** "Times in Europe/Paris." */
  footer: string;
}

/** At most this many sentences in one message; the rest is "and N more". */
export const MAX_LINES = 20;

export interface MessageContext {
  /** Where the pages answer (`pagesBaseUrl`), without a trailing slash, or null: then no links. */
  baseUrl: string | null;
  timeZone: string;
}

const link = (ctx: MessageContext, path: string): string | null =>
  ctx.baseUrl === null ? null : `${ctx.baseUrl}${path}`;

/** "2026-11-24 09:10" in the configured zone. */
export function localClock(iso: string, timeZone: string): string {
  const key = `${timeZone} ${iso}`;
  let clock = clocks.get(key);
  if (clock === undefined) {
    const parts = clockFormat(timeZone).formatToParts(new Date(iso));
    const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
    clock = `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`;
    if (clocks.size >= MAX_CLOCKS) clocks.clear();
    clocks.set(key, clock);
  }
  return clock;
}

/**
 * A page shows the same few instants many times (a run's changes share its time), and each
 * formatToParts call is slow beside a map lookup: the last answers are kept, at most MAX_CLOCKS.
 */
const clocks = new Map<string, string>();
const MAX_CLOCKS = 1000;

export interface RunChanges {
  runId: number;
  finishedAt: string;
  changes: readonly ChangeFacts[];
  /** The mirror's thumbnail of a coworker (its own media URL), when it holds one. */
  imageOf?: (change: ChangeFacts) => string | null;
}

/** A line's name as every message writes it: bounded, the uuid when blank, isolated for bidi. */
export const lineWho = (name: string, uuid: string): string => isolatedText(whoWords(name, uuid));

/** One message for one run's changes: a title, a sentence per change, "and N more". */
export function changesMessage(run: RunChanges, ctx: MessageContext): NotifyMessage {
  const shown = run.changes.slice(0, MAX_LINES);
  const rest = run.changes.length - shown.length;
  const runUrl = link(ctx, `/runs/${run.runId}/`);
  return {
    event: 'changes',
    title: runTitle(countChanges(run.changes)),
    summary: null,
    lines: shown.map((facts) => {
      const words = describeChange(facts);
      return {
        who: lineWho(facts.name, facts.uuid),
        whoUrl: link(ctx, `/coworkers/${encodeURIComponent(facts.uuid)}/`),
        rest: `${words.appearance}${words.joint}${phraseText(words.what, isolatedText)}`,
        imageUrl: run.imageOf?.(facts) ?? null,
      };
    }),
    more: rest > 0 ? { count: rest, url: runUrl } : null,
    link: runUrl === null ? null : { label: `Run ${run.runId}`, url: runUrl },
    footer: `Run ${run.runId} finished ${localClock(run.finishedAt, ctx.timeZone)}. Times in ${ctx.timeZone}.`,
  };
}

/**
 * The store's first listing (a first sync): the team as the mirror found it, told as a count, never
 * as people who joined.
 */
export interface FirstListing {
  runId: number;
  finishedAt: string;
  /** Coworkers found: uuids, each counted once. */
  coworkers: number;
  /** Entries of the listing: a coworker listed twice is two. */
  entries: number;
}

/**
 * Counts one change of a first listing (every one `added`): each uuid's first appearance is its
 * slot 0, so the coworkers are counted as the rows pass, without holding their uuids.
 */
export function tallyFirstListing(first: FirstListing, change: { slot: number }): void {
  first.entries++;
  if (change.slot === 0) first.coworkers++;
}

/** A first listing's figures from its changes. */
export function countFirstListing(
  runId: number,
  finishedAt: string,
  changes: Iterable<{ slot: number }>,
): FirstListing {
  const first: FirstListing = { runId, finishedAt, coworkers: 0, entries: 0 };
  for (const change of changes) tallyFirstListing(first, change);
  return first;
}

const coworkersWords = (n: number): string => `${n} coworker${n === 1 ? '' : 's'}`;

/** "the mirror now follows 63 coworkers": a title's words for a first listing. */
export const firstListingWords = (first: FirstListing): string =>
  `the mirror now follows ${coworkersWords(first.coworkers)}`;

/**
 * "The mirror's first sync, run 1 at 2026-11-24 09:10, found 63 coworkers on the team page." and
 * what comes next: the changes after it (a digest) or, alone, what later messages will say.
 */
export function firstListingSummary(first: FirstListing, laterChanges: boolean, ctx: MessageContext): string {
  const repeated =
    first.entries === first.coworkers ? '' : ` (${first.entries} entries: some are listed more than once)`;
  const next = laterChanges
    ? 'What changed after it follows.'
    : 'From now on, messages say who joins, leaves, returns or changes.';
  return (
    `The mirror's first sync, run ${first.runId} at ${localClock(first.finishedAt, ctx.timeZone)}, ` +
    `found ${coworkersWords(first.coworkers)} on the team page${repeated}. ${next}`
  );
}

/** Where a first listing's message points: the mirror's list of the coworkers it follows. */
export const coworkersLink = (ctx: MessageContext): NotifyMessage['link'] => {
  const url = link(ctx, '/coworkers/');
  return url === null ? null : { label: 'Coworkers', url };
};

/** The one message of a first listing: how many coworkers the mirror now follows, no sentence per person. */
export function firstListingMessage(first: FirstListing, ctx: MessageContext): NotifyMessage {
  return {
    event: 'changes',
    title: `Team page: ${firstListingWords(first)}`,
    summary: firstListingSummary(first, false, ctx),
    lines: [],
    more: null,
    link: coworkersLink(ctx),
    footer: `Run ${first.runId} finished ${localClock(first.finishedAt, ctx.timeZone)}. Times in ${ctx.timeZone}.`,
  };
}

export interface FailureFacts {
  failedRuns: number;
  since: string;
  /** The error of the last failed run, as a person reads it ("upstream answered 503"). */
  reason: string;
  /** When the snapshot still served was taken, or null when there is none. */
  servingSince: string | null;
}

/** "The mirror has failed 3 runs in a row since 09:10: upstream answered 503. It keeps serving…" */
export function failureMessage(facts: FailureFacts, ctx: MessageContext): NotifyMessage {
  const serving =
    facts.servingSince === null
      ? 'It has no snapshot to serve yet.'
      : `It keeps serving the snapshot of ${localClock(facts.servingSince, ctx.timeZone)}.`;
  const runs = facts.failedRuns === 1 ? '1 run' : `${facts.failedRuns} runs in a row`;
  const statusUrl = link(ctx, '/');
  return {
    event: 'failures',
    title: 'Team page mirror: syncs failing',
    // The reason may quote what the upstream sent.
    summary: `The mirror has failed ${runs} since ${localClock(facts.since, ctx.timeZone)}: ${isolatedText(facts.reason)}. ${serving}`,
    lines: [],
    more: null,
    link: statusUrl === null ? null : { label: 'Status', url: statusUrl },
    footer: `Times in ${ctx.timeZone}.`,
  };
}

/** "The mirror syncs again since 10:05 after 3 failed runs." */
export function recoveryMessage(
  facts: { at: string; failedRuns: number },
  ctx: MessageContext,
): NotifyMessage {
  const statusUrl = link(ctx, '/');
  return {
    event: 'recoveries',
    title: 'Team page mirror: syncing again',
    summary: `The mirror syncs again since ${localClock(facts.at, ctx.timeZone)}, after ${facts.failedRuns} failed run${facts.failedRuns === 1 ? '' : 's'}.`,
    lines: [],
    more: null,
    link: statusUrl === null ? null : { label: 'Status', url: statusUrl },
    footer: `Times in ${ctx.timeZone}.`,
  };
}

/** What `notify test` sends: invented people, every kind of sentence, a link per person. */
export function sampleMessage(now: Date, ctx: MessageContext): NotifyMessage {
  const person = (uuid: string, name: string, post: string) => ({ uuid, slot: 0, name, post, field: null });
  const changes: ChangeFacts[] = [
    { ...person('sample-1', 'Zoë Dvořák', 'QA engineer'), kind: 'added', old: null, new: null },
    {
      ...person('sample-2', 'José Álvarez', 'QA lead'),
      kind: 'changed',
      field: 'post',
      old: 'qa engineer',
      new: 'QA lead',
    },
    { ...person('sample-3', 'Kate', ''), kind: 'removed', old: null, new: null },
  ];
  const message = changesMessage({ runId: 0, finishedAt: now.toISOString(), changes }, ctx);
  return {
    ...message,
    event: 'test',
    title: `Test from the coworker mirror: ${message.title}`,
    summary: 'A sample of what this target will receive; the people below are invented.',
    link: null,
    footer: `Sent by coworker-mirror notify test at ${localClock(now.toISOString(), ctx.timeZone)}. Times in ${ctx.timeZone}.`,
  };
}

/** The message as plain text: the e-mail's text part, ntfy's body, the fallback of chat formats. */
export function plainText(message: NotifyMessage): string {
  const lines = [
    ...(message.summary !== null ? [message.summary] : []),
    ...message.lines.map((l) => `• ${l.who}${l.rest}${l.whoUrl !== null ? ` <${l.whoUrl}>` : ''}`),
    ...(message.more !== null
      ? [`and ${message.more.count} more${message.more.url !== null ? `: ${message.more.url}` : ''}`]
      : []),
    ...(message.link !== null ? [`${message.link.label}: ${message.link.url}`] : []),
    message.footer,
  ];
  return lines.join('\n');
}
