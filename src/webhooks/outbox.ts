import type { WebhookEventType } from '../config/load-config.js';
import type { EndpointKeys } from '../db/endpoint-keys.js';
import type { OutboxFacts, OutboxMessage, OutboxPlan } from '../db/run-commit.js';
import type { ChangeRow, RunRow } from '../db/schema.js';
import { changeView } from '../views/history-views.js';
import { maskUrlCredentials } from '../config/upstream-target.js';
import type { OutboxSettings } from './settings.js';
import { stringifyJson } from '../json/safe-json.js';

/** A `coworkers.changed` body above this is split into parts (`part`, `parts`). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/**
 * The notifications a succeeded run calls for (`sync.recovered`, `coworkers.changed`), composed
 * inside the transaction that records the run, to the endpoints by their keys in the store `keys`
 * are of; null when no endpoint is configured.
 */
export function succeededRunOutbox(
  settings: OutboxSettings | undefined,
  keys: Pick<EndpointKeys, 'webhook'>,
): OutboxPlan | null {
  if (!settings || settings.urls.length === 0) return null;
  return {
    urls: settings.urls.map((url) => keys.webhook(url)),
    channel: 'webhook',
    messages: (facts) => succeededMessages(settings, facts),
  };
}

/**
 * `sync.failed` when the run is the failure that makes the streak reach the threshold (once per
 * streak), composed inside the transaction that records the run as failed.
 */
export function failedRunOutbox(
  settings: OutboxSettings | undefined,
  keys: Pick<EndpointKeys, 'webhook'>,
): OutboxPlan | null {
  if (!settings || settings.urls.length === 0 || !settings.events.includes('sync.failed')) return null;
  return {
    urls: settings.urls.map((url) => keys.webhook(url)),
    channel: 'webhook',
    messages: (facts) => failedMessages(settings, facts),
  };
}

function* succeededMessages(settings: OutboxSettings, facts: OutboxFacts): Iterable<OutboxMessage> {
  const { run } = facts;
  if (run.status !== 'succeeded') return;
  if (settings.events.includes('sync.recovered') && facts.failedBefore >= settings.failureThreshold) {
    yield envelope('sync.recovered', run, { failed_runs: facts.failedBefore, counts: countsOf(run) });
  }
  if (settings.events.includes('coworkers.changed')) yield* changedMessages(facts);
}

function* failedMessages(settings: OutboxSettings, facts: OutboxFacts): Iterable<OutboxMessage> {
  const { run } = facts;
  if (run.status !== 'failed') return;
  const streak = facts.failedBefore + 1;
  if (streak !== settings.failureThreshold) return;
  yield envelope('sync.failed', run, {
    consecutive_failures: streak,
    error: { code: run.errorCode ?? 'UNEXPECTED', message: run.errorMessage ?? '' },
  });
}

function countsOf(run: RunRow) {
  return {
    added: run.added,
    changed: run.changed,
    removed: run.removed,
    returned: run.returned,
    unchanged: run.unchanged,
  };
}

function envelope(type: WebhookEventType, run: RunRow, data: Record<string, unknown>): OutboxMessage {
  const body = stringifyJson({
    type,
    timestamp: run.finishedAt ?? new Date().toISOString(),
    data: { run: run.id, upstream: maskUrlCredentials(run.upstream), ...data },
  });
  return { type, body };
}

/**
 * The run's changes, as `changes --json` shows them, in parts of at most MAX_PAYLOAD_BYTES (a single
 * change larger than that travels alone), built one part at a time: a first sync of 100,000 entries
 * never holds more than one part in memory. None when the run changed nothing. `initial` tells the
 * store's first listing (every change `added`: the team as the mirror found it, not people who
 * joined) on each of its parts, so a consumer that words changes for people can count it instead.
 */
function* changedMessages(facts: OutboxFacts): Iterable<OutboxMessage> {
  const { run } = facts;
  const head = { counts: countsOf(run), initial: facts.firstListingRun === run.id };
  const ranges = partRanges(run, facts.changes(), head);
  for (const [i, [from, to]] of ranges.entries()) {
    const changes = facts.changesBetween(from, to).map(changeView);
    yield envelope('coworkers.changed', run, { ...head, part: i + 1, parts: ranges.length, changes });
  }
}

/** First pass: the id range of each part, measuring each change as it will be serialized. */
function partRanges(
  run: RunRow,
  rows: Iterable<ChangeRow>,
  head: { counts: ReturnType<typeof countsOf>; initial: boolean },
): [number, number][] {
  // The envelope with part numbers as wide as they can get: what each part costs besides changes.
  const widest = Number.MAX_SAFE_INTEGER;
  const overhead = Buffer.byteLength(
    envelope('coworkers.changed', run, { ...head, part: widest, parts: widest, changes: [] }).body,
  );
  const ranges: [number, number][] = [];
  let current: [number, number] | null = null;
  let bytes = overhead;
  for (const row of rows) {
    const size = Buffer.byteLength(stringifyJson(changeView(row))) + 1;
    if (current && bytes + size > MAX_PAYLOAD_BYTES) {
      ranges.push(current);
      current = null;
      bytes = overhead;
    }
    current = current ? [current[0], row.id] : [row.id, row.id];
    bytes += size;
  }
  if (current) ranges.push(current);
  return ranges;
}
