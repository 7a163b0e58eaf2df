import type { PruneCounts } from '../db/store.js';
import type { Config } from '../config/load-config.js';
import { prunedWords } from '../views/pruned-words.js';
import { stringifyJson } from '../json/safe-json.js';
import { silentLogger } from '../logger.js';
import { pruneHistory, type PruneAges, type PruneSummary } from '../sync/prune-history.js';
import { EXIT } from './exit-codes.js';
import { stdoutOutput, type Output } from './output.js';
import { withExistingStoreAsync } from './with-store.js';

/**
 * `prune`: forgets coworkers removed longer ago than `--removed-before` and prunes history older
 * than `--older-than` (src/db/prune.ts), then says what went, in words or as one JSON object. It
 * takes the run lock: while a sync runs it exits SYNC_LOCKED and deletes nothing.
 */
export async function runPruneCommand(
  config: Pick<Config, 'database' | 'media'>,
  ages: PruneAges,
  json: boolean,
  out: Output = stdoutOutput(),
): Promise<number> {
  const summary = await withExistingStoreAsync(config, (store) =>
    pruneHistory(store, ages, { media: config.media, logger: silentLogger() }),
  );
  if (json) out.write(stringifyJson(pruneJson(summary)));
  else for (const line of pruneLines(summary)) out.write(line);
  if (!summary.scrubbed && summary.scrubProblem !== null) {
    process.stderr.write(`coworker-mirror: warning: ${summary.scrubProblem}\n`);
  }
  if (summary.files.problem !== null) {
    process.stderr.write(
      `coworker-mirror: warning: ${counted(summary.files.kept, 'media file')} kept: ${summary.files.problem}\n`,
    );
  }
  return EXIT.ok;
}

const counted = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** What the prune deleted, as a person reads it. */
export function countWords(counts: PruneCounts): string {
  return [
    counted(counts.coworkers, 'coworker'),
    counted(counts.versions, 'version'),
    counted(counts.positions, 'listing position'),
    counted(counts.changes, 'change'),
    counted(counts.mediaVersions + counts.mediaUrls, 'media row'),
    counted(counts.files, 'media file'),
    counted(counts.messages, 'outbox message'),
  ].join(', ');
}

/** The report in words: what was asked, what went, and what the history now says of itself. */
export function pruneLines(summary: PruneSummary): string[] {
  const asked = [
    ...(summary.removedBefore === null ? [] : [`coworkers removed by ${summary.removedBefore}`]),
    ...(summary.olderThan === null ? [] : [`history before ${summary.olderThan}`]),
  ].join(' and ');
  const deleted = Object.values(summary.counts).some((n) => n > 0);
  const lines = [
    deleted ? `Pruned ${asked}: ${countWords(summary.counts)}.` : `Nothing to prune (${asked}).`,
  ];
  const horizon = prunedWords(summary.horizon);
  if (horizon !== null) lines.push(horizon);
  if (summary.pendingMessages > 0) {
    lines.push(
      `${counted(summary.pendingMessages, 'message')} telling of what was pruned still ` +
        `${summary.pendingMessages === 1 ? 'waits' : 'wait'} for delivery: kept until delivered or given up, ` +
        'then forgotten by the next prune.',
    );
  }
  return lines;
}

/** The report as JSON: snake_case, as the API and `--json` of other commands write. */
export function pruneJson(summary: PruneSummary): Record<string, unknown> {
  const c = summary.counts;
  return {
    removed_before: summary.removedBefore,
    older_than: summary.olderThan,
    deleted: {
      coworkers: c.coworkers,
      versions: c.versions,
      listing_positions: c.positions,
      changes: c.changes,
      media_versions: c.mediaVersions,
      media_urls: c.mediaUrls,
      media_files: c.files,
      messages: c.messages,
      deliveries: c.deliveries,
      attempts: c.attempts,
    },
    media_files_in_folder: { deleted: summary.files.deleted, kept: summary.files.kept },
    media_folder_problem: summary.files.problem,
    pending_messages: summary.pendingMessages,
    pruned_before: {
      removed: summary.horizon.removedBefore,
      history: summary.horizon.historyBefore,
    },
    scrubbed: summary.scrubbed,
    scrub_problem: summary.scrubProblem,
  };
}
