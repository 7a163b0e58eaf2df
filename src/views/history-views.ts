import { maskUrlCredentials } from '../config/upstream-target.js';
import type { ChangeRow, CoworkerRow, MediaRunRow, RunRow, VersionRow } from '../db/schema.js';
import { isCanonicalJson } from '../json/canonical-json.js';
import { parseJson } from '../json/lossless.js';

/**
 * The public shapes of runs, changes and versions: one definition for `--json` output and the
 * history API, so both say the same thing the same way.
 */

export interface RunView {
  id: number;
  status: RunRow['status'];
  started_at: string;
  finished_at: string | null;
  upstream: string;
  pages: number | null;
  entries: number | null;
  added: number;
  changed: number;
  removed: number;
  returned: number;
  unchanged: number;
  unknown_fields: string[];
  error: { code: string; message: string } | null;
  /** The upstream this database mirrored before this run rebound it (`--rebind`), else null. */
  rebound_from: string | null;
  /** What started the run (null: recorded before triggers were kept). */
  trigger: RunRow['trigger'];
  /** The tick of SYNC_CRON the run served (its nominal time), null for a run no tick started. */
  scheduled_for: string | null;
  /** Present when the run mirrored media (MEDIA_ORIGINS). */
  media?: { fetched: number; revalidated: number; failed: number; bytes: number };
}

export function runView(row: RunRow, media?: MediaRunRow): RunView {
  return {
    id: row.id,
    status: row.status,
    started_at: row.startedAt,
    finished_at: row.finishedAt,
    // Runs stored before URLs were masked at the source may still hold a password: never serve it.
    upstream: maskUrlCredentials(row.upstream),
    pages: row.pages,
    entries: row.entries,
    added: row.added,
    changed: row.changed,
    removed: row.removed,
    returned: row.returned,
    unchanged: row.unchanged,
    unknown_fields: row.unknownFields
      ? [...new Set((JSON.parse(row.unknownFields) as { field: string }[]).map((u) => u.field))]
      : [],
    error: row.errorCode ? { code: row.errorCode, message: row.errorMessage ?? '' } : null,
    rebound_from: row.reboundFrom,
    trigger: row.trigger,
    scheduled_for: row.scheduledFor,
    ...(media
      ? {
          media: {
            fetched: media.fetched,
            revalidated: media.revalidated,
            failed: media.failed,
            bytes: media.bytes,
          },
        }
      : {}),
  };
}

export interface ChangeView {
  id: number;
  run: number;
  at: string;
  uuid: string;
  /** Which appearance of a uuid listed more than once (0 for the first). */
  appearance: number;
  kind: ChangeRow['kind'];
  field?: string;
  old?: unknown;
  new?: unknown;
}

const parse = (text: string | null): unknown => (text === null ? null : parseJson(text));

export function changeView(row: ChangeRow): ChangeView {
  const view: ChangeView = {
    id: row.id,
    run: row.runId,
    at: row.at,
    uuid: row.uuid,
    appearance: row.slot,
    kind: row.kind,
  };
  // media_changed: new bytes behind the same URL; old and new are `{ url, sha256 }`.
  if (row.kind === 'changed' || row.kind === 'media_changed') {
    view.field = row.field ?? '';
    view.old = parse(row.oldValue);
    view.new = parse(row.newValue);
  } else if (row.kind === 'removed') {
    view.old = parse(row.oldValue);
  } else {
    view.new = parse(row.newValue);
  }
  return view;
}

/** Stored JSON text as it reads back, or undefined when reading it back could change it. */
export function canonicalText(text: string | null): string | undefined {
  if (text === null) return 'null';
  if (isCanonicalJson(text)) return text;
  try {
    // V8's parse and stringify: equal text means no whitespace, escapes, duplicate keys or
    // lossy numbers, so the lossless round trip of `changeView` would give these very bytes.
    return JSON.stringify(JSON.parse(text)) === text ? text : undefined;
  } catch {
    return undefined; // deeper than V8 recurses, or not JSON: the careful path decides
  }
}

export interface VersionView {
  id: number;
  uuid: string;
  appearance: number;
  valid_from_run: number;
  valid_to_run: number | null;
  entry: unknown;
}

export function versionView(row: VersionRow): VersionView {
  return {
    id: row.id,
    uuid: row.uuid,
    appearance: row.slot,
    valid_from_run: row.validFromRun,
    valid_to_run: row.validToRun,
    entry: parseJson(row.body),
  };
}

export interface CoworkerView {
  uuid: string;
  first_seen_run: number;
  first_seen_at: string;
  /** Null while present: it is then seen by every successful run. */
  last_seen_run: number | null;
  last_seen_at: string | null;
  removed: boolean;
  removed_run: number | null;
  removed_at: string | null;
  returned_count: number;
}

export function coworkerView(
  row: CoworkerRow,
  latest: { id: number; finishedAt: string | null } | undefined,
): CoworkerView {
  const removed = row.removedRun !== null;
  return {
    uuid: row.uuid,
    first_seen_run: row.firstSeenRun,
    first_seen_at: row.firstSeenAt,
    last_seen_run: removed ? row.lastSeenRun : (latest?.id ?? null),
    last_seen_at: removed ? row.lastSeenAt : (latest?.finishedAt ?? null),
    removed,
    removed_run: row.removedRun,
    removed_at: row.removedAt,
    returned_count: row.returnedCount,
  };
}
