import type { Config } from '../config/load-config.js';
import { pagesBaseUrl, type PageAddressSettings } from '../config/listeners.js';
import type { ChangeRow } from '../db/schema.js';
import type { DigestFacts, DigestPlan, OutboxMessage } from '../db/run-commit.js';
import { digestMessage, lastDigestPeriod } from './digest.js';
import {
  MAX_LINES,
  tallyFirstListing,
  type FirstListing,
  type MessageContext,
  type RunChanges,
} from './message.js';
import type { NotificationOutbox } from './outbox.js';
import { NOTIFY_TYPE_PREFIX, counted } from './run-outbox.js';
import { factsOfChange } from './run-message.js';
import { keyedTargets, type NotifyDigest, type TargetKeys } from './targets.js';

/** What writing hourly or daily digests needs: plain data, no URLs. */
export interface DigestSettings {
  digest: NotifyDigest;
  targetIds: readonly string[];
  context: MessageContext;
}

/** The plan of the digest of the period that ended last before `now`; null under per-run messages. */
export function digestPlan(settings: DigestSettings, now: Date): DigestPlan | null {
  const period = lastDigestPeriod(now, settings.digest, settings.context.timeZone);
  if (period === null || settings.targetIds.length === 0) return null;
  const from = period.from.toISOString();
  const to = period.to.toISOString();
  return { from, to, targetIds: settings.targetIds, message: (facts) => message(facts, from, to, settings) };
}

function message(
  facts: DigestFacts,
  from: string,
  to: string,
  settings: DigestSettings,
): OutboxMessage | null {
  // The first listing's changes are counted as they pass; only the others are held and worded.
  let first: FirstListing | null = null;
  const rows: ChangeRow[] = [];
  for (const row of facts.changes()) {
    if (row.runId !== facts.firstListingRun) rows.push(row);
    else {
      first ??= { runId: row.runId, finishedAt: row.at, coworkers: 0, entries: 0 };
      tallyFirstListing(first, row);
    }
  }
  // As for a run: the first MAX_LINES are worded, the rest only counted.
  const worded = rows.slice(0, MAX_LINES);
  const subjects = facts.subjectsOf(worded);
  const byRun = new Map<number, RunChanges & { changes: ReturnType<typeof factsOfChange>[] }>();
  rows.forEach((row: ChangeRow, i) => {
    const run = byRun.get(row.runId) ?? { runId: row.runId, finishedAt: row.at, changes: [] };
    run.changes.push(i < MAX_LINES ? factsOfChange(row, subjects.get(row.id)) : counted(row));
    byRun.set(row.runId, run);
  });
  const digest = digestMessage([...byRun.values()], { from, to }, settings.context, first);
  if (digest === null) return null;
  return { type: `${NOTIFY_TYPE_PREFIX}${digest.event}`, body: JSON.stringify(digest) };
}

/**
 * Writes the digest due at `now` once per target, whichever instance gets there first (the store
 * keys it by target and period); an empty period writes nothing. Answers the deliveries written.
 */
export async function writeDueDigest(
  outbox: NotificationOutbox,
  settings: DigestSettings,
  now: Date,
): Promise<number> {
  const plan = digestPlan(settings, now);
  if (plan === null || !outbox.enqueueDigest) return 0;
  return outbox.enqueueDigest(plan);
}

/**
 * The digest settings of the configuration, the targets by their ids in the store `keys` are of;
 * null when runs send their own messages.
 */
export function digestSettings(
  config: {
    notify: Pick<Config['notify'], 'urls' | 'events' | 'digest'>;
    server: PageAddressSettings;
  },
  keys: TargetKeys,
  timeZone: string,
): DigestSettings | null {
  const { urls, events, digest } = config.notify;
  if (digest.every === 'run' || urls === null || urls.length === 0 || !events.includes('changes'))
    return null;
  return {
    digest,
    targetIds: keyedTargets(urls, keys).map((t) => t.id),
    context: { baseUrl: pagesBaseUrl(config.server), timeZone },
  };
}
