import type { Config } from '../config.js';
import { openDatabase, type MirrorDatabase } from '../db/open.js';
import { mediaRunsByIds } from '../db/media-queries.js';
import { coworkerHistory, latestSucceededRun, listChanges, listRuns } from '../db/queries.js';
import type { ChangeKind } from '../db/schema.js';
import { EXIT } from '../exit-codes.js';
import {
  changeView,
  coworkerView,
  runView,
  versionView,
  type ChangeView,
  type RunView,
} from '../history-views.js';

type Write = (line: string) => void;
const stdout: Write = (line) => process.stdout.write(`${line}\n`);

function withStore<T>(config: Config, fn: (store: MirrorDatabase) => T): T {
  const store = openDatabase(config.databasePath);
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

const show = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));

export function changeLine(c: ChangeView): string {
  const who = c.appearance > 0 ? `${c.uuid}#${c.appearance}` : c.uuid;
  if (c.kind === 'changed')
    return `${c.at}  run ${c.run}  ${who}  changed ${c.field}: ${show(c.old)} → ${show(c.new)}`;
  if (c.kind === 'media_changed') {
    const [before, after] = [c.old, c.new] as ({ url?: string; sha256?: string } | undefined)[];
    return `${c.at}  run ${c.run}  ${who}  media_changed ${c.field} ${after?.url ?? ''}: ${before?.sha256 ?? ''} → ${after?.sha256 ?? ''}`;
  }
  const entry = (c.kind === 'removed' ? c.old : c.new) as { name?: unknown } | null;
  return `${c.at}  run ${c.run}  ${who}  ${c.kind}  ${show(entry?.name)}`;
}

export function runLine(r: RunView): string {
  const counts = `+${r.added} ~${r.changed} -${r.removed} ↺${r.returned} =${r.unchanged}`;
  const error = r.error ? `  [${r.error.code}] ${r.error.message}` : '';
  const media = r.media
    ? `  media fetched ${r.media.fetched} revalidated ${r.media.revalidated} failed ${r.media.failed} ${r.media.bytes} B`
    : '';
  return `run ${r.id}  ${r.status.padEnd(9)}  ${r.started_at}  ${r.entries ?? '-'} entries  ${counts}${media}${error}`;
}

/** `history <uuid>`: versions with their validity, then the changes; exit 7 for an unknown uuid. */
export function runHistoryCommand(
  config: Config,
  uuid: string,
  json: boolean,
  write: Write = stdout,
): number {
  return withStore(config, (store) => {
    const history = coworkerHistory(store, uuid);
    if (!history) {
      process.stderr.write(`no coworker with uuid ${JSON.stringify(uuid)} in ${config.databasePath}\n`);
      return EXIT.notFound;
    }
    const latest = latestSucceededRun(store);
    const coworker = coworkerView(history.coworker, latest);
    if (json) {
      write(JSON.stringify({ type: 'coworker', ...coworker }));
      for (const v of history.versions) write(JSON.stringify({ type: 'version', ...versionView(v) }));
      for (const c of history.changes) write(JSON.stringify({ type: 'change', ...changeView(c) }));
      return EXIT.ok;
    }
    write(
      `coworker ${coworker.uuid}: first seen run ${coworker.first_seen_run} (${coworker.first_seen_at})` +
        (coworker.removed ? `, removed run ${coworker.removed_run} (${coworker.removed_at})` : ', present') +
        (coworker.returned_count > 0 ? `, returned ${coworker.returned_count}×` : ''),
    );
    write('versions:');
    for (const v of history.versions.map(versionView)) {
      const until = v.valid_to_run === null ? 'current' : `until run ${v.valid_to_run}`;
      write(
        `  appearance ${v.appearance}  from run ${v.valid_from_run} ${until}  ${JSON.stringify(v.entry)}`,
      );
    }
    write('changes:');
    for (const c of history.changes.map(changeView)) write(`  ${changeLine(c)}`);
    return EXIT.ok;
  });
}

export interface ChangesOptions {
  since: string | undefined;
  until: string | undefined;
  field: string | undefined;
  uuid: string | undefined;
  kind: ChangeKind | undefined;
  limit: number;
  json: boolean;
}

export function runChangesCommand(config: Config, options: ChangesOptions, write: Write = stdout): number {
  return withStore(config, (store) => {
    const rows = listChanges(store, {
      limit: options.limit,
      ...(options.since !== undefined ? { since: options.since } : {}),
      ...(options.until !== undefined ? { until: options.until } : {}),
      ...(options.field !== undefined ? { field: options.field } : {}),
      ...(options.uuid !== undefined ? { uuid: options.uuid } : {}),
      ...(options.kind !== undefined ? { kind: options.kind } : {}),
    });
    for (const c of rows.map(changeView)) write(options.json ? JSON.stringify(c) : changeLine(c));
    if (!options.json && rows.length === 0) write('no changes');
    return EXIT.ok;
  });
}

export function runRunsCommand(config: Config, limit: number, json: boolean, write: Write = stdout): number {
  return withStore(config, (store) => {
    const runs = listRuns(store, { limit });
    const media = mediaRunsByIds(
      store,
      runs.map((r) => r.id),
    );
    const rows = runs.map((r) => runView(r, media.get(r.id)));
    for (const r of rows) write(json ? JSON.stringify(r) : runLine(r));
    if (!json && rows.length === 0) write('no runs yet');
    return EXIT.ok;
  });
}
