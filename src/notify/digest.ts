import {
  changesMessage,
  coworkersLink,
  firstListingMessage,
  firstListingSummary,
  firstListingWords,
  localClock,
  type FirstListing,
  type MessageContext,
  type NotifyMessage,
  type RunChanges,
} from './message.js';
import type { NotifyDigest } from './targets.js';
import { wallFormat } from '../time/date-formats.js';

/** The zone's offset from UTC at `instant`, in ms (wall clock minus UTC). */
function offsetMs(instant: Date, timeZone: string): number {
  const parts = wallFormat(timeZone).formatToParts(instant);
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - Math.floor(instant.getTime() / 1000) * 1000;
}

/** The instant the zone's wall clock reads `wall` (given as UTC fields); across a DST gap, the later one. */
function instantOfWall(wall: number, timeZone: string): Date {
  let guess = new Date(wall - offsetMs(new Date(wall), timeZone));
  // A second pass settles a guess that crossed an offset change.
  guess = new Date(wall - offsetMs(guess, timeZone));
  return guess;
}

/**
 * When the digest that `after` falls in is sent: the next full hour, or the next `at` of the
 * zone's wall clock (today's if still ahead, else tomorrow's); null for one message per run.
 */
export function nextDigestAt(after: Date, digest: NotifyDigest, timeZone: string): Date | null {
  if (digest.every === 'run') return null;
  const local = new Date(after.getTime() + offsetMs(after, timeZone));
  if (digest.every === 'hour') {
    const wall = Date.UTC(
      local.getUTCFullYear(),
      local.getUTCMonth(),
      local.getUTCDate(),
      local.getUTCHours() + 1,
    );
    return instantOfWall(wall, timeZone);
  }
  const [hour = 0, minute = 0] = digest.at.split(':').map(Number);
  for (let day = 0; day < 3; day++) {
    const wall = Date.UTC(
      local.getUTCFullYear(),
      local.getUTCMonth(),
      local.getUTCDate() + day,
      hour,
      minute,
    );
    const at = instantOfWall(wall, timeZone);
    if (at.getTime() > after.getTime()) return at;
  }
  return null;
}

/**
 * One message for the runs a digest covers: their changes together, titled with the period
 * ("Team page since 2026-11-24 09:00: 2 joined, 1 left"), the link to the timeline of the period.
 * A first listing in the period is told as the count it is, never as people who joined ("…: the
 * mirror now follows 63 coworkers; then 1 joined"); `runs` are the others.
 */
export function digestMessage(
  runs: readonly RunChanges[],
  period: { from: string; to: string },
  ctx: MessageContext,
  firstListing: FirstListing | null = null,
): NotifyMessage | null {
  const changes = runs.flatMap((r) => r.changes);
  const last = runs.at(-1);
  const since = localClock(period.from, ctx.timeZone);
  const timeline =
    ctx.baseUrl === null ? null : `${ctx.baseUrl}/changes/?since=${encodeURIComponent(period.from)}`;
  const runCount = runs.length + (firstListing === null ? 0 : 1);
  const footer = `${runCount} run${runCount === 1 ? '' : 's'} up to ${localClock(period.to, ctx.timeZone)}. Times in ${ctx.timeZone}.`;
  if (last === undefined || changes.length === 0) {
    if (firstListing === null) return null;
    return {
      ...firstListingMessage(firstListing, ctx),
      title: `Team page since ${since}: ${firstListingWords(firstListing)}`,
      footer,
    };
  }
  const imageOf = (c: (typeof changes)[number]) =>
    runs.find((r) => r.changes.includes(c))?.imageOf?.(c) ?? null;
  const message = changesMessage({ runId: last.runId, finishedAt: period.to, changes, imageOf }, ctx);
  const counts = message.title.replace(/^Team page: /, '');
  return {
    ...message,
    title:
      firstListing === null
        ? `Team page since ${since}: ${counts}`
        : `Team page since ${since}: ${firstListingWords(firstListing)}; then ${counts}`,
    summary: firstListing === null ? null : firstListingSummary(firstListing, true, ctx),
    more: message.more === null ? null : { count: message.more.count, url: timeline },
    link:
      firstListing !== null
        ? coworkersLink(ctx)
        : timeline === null
          ? null
          : { label: 'Every change of the period', url: timeline },
    footer,
  };
}

/** The latest digest boundary at or before `at`, or null for one message per run. */
function boundaryAtOrBefore(at: Date, digest: NotifyDigest, timeZone: string): Date | null {
  // A day is at most 25 hours (DST): a day and two hours back holds at least one boundary.
  let boundary = nextDigestAt(new Date(at.getTime() - 26 * 3600_000), digest, timeZone);
  if (boundary === null || boundary.getTime() > at.getTime()) return null;
  for (;;) {
    const next = nextDigestAt(boundary, digest, timeZone);
    if (next === null || next.getTime() > at.getTime()) return boundary;
    boundary = next;
  }
}

/** The period whose digest is due at `now`: the last full hour or day (at its local time) before it. */
export function lastDigestPeriod(
  now: Date,
  digest: NotifyDigest,
  timeZone: string,
): { from: Date; to: Date } | null {
  const to = boundaryAtOrBefore(now, digest, timeZone);
  if (to === null) return null;
  const from = boundaryAtOrBefore(new Date(to.getTime() - 1), digest, timeZone);
  return from === null ? null : { from, to };
}
