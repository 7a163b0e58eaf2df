import type { ChangeStreamFilter, NamedCoworker, Store } from '../db/store.js';
import type { Config } from '../config/load-config.js';
import type { ChangeKind } from '../db/schema.js';
import { ConfigError, MirrorError, truncateForMessage } from '../errors.js';
import { EXIT } from './exit-codes.js';
import { changeView, coworkerView, versionView, type ChangeView } from '../views/history-views.js';
import { KNOWN_FIELDS } from '../upstream/contract.js';
import { renderChanges, renderFound, renderHistory } from './human-output.js';
import { withExistingStoreAsync } from './with-store.js';
import { stdoutOutput, type Output } from './output.js';
import { stringifyJson } from '../json/safe-json.js';
import { prunedWords } from '../views/pruned-words.js';

export type { Output } from './output.js';
export { runRunsCommand } from './runs-command.js';

/** Who `history` is about: a uuid, or a name that must match exactly one coworker. */
export type HistoryTarget = { uuid: string } | { name: string };

async function resolveTarget(store: Store, target: HistoryTarget): Promise<string> {
  if ('uuid' in target) return target.uuid;
  const found = await store.findByName(target.name, MAX_MATCHES);
  if (found.length === 1 && found[0]) return found[0].uuid;
  if (found.length === 0) {
    throw new MirrorError('NOT_FOUND', `nobody whose name contains ${JSON.stringify(target.name)}`, {
      name: target.name,
    });
  }
  throw ambiguousName(target.name, found);
}

/** `findByName` reads at most this many matches for `history --name`; past it the count is "at least". */
const MAX_MATCHES = 50;
/** The matches an ambiguous `--name` names in its message; `find` lists more. */
const NAMED_MATCHES = 10;

/**
 * A `--name` more than one coworker has: not a configuration problem but a question back, with the
 * matches to choose from. The names are the upstream's: `errorReport` draws their control characters.
 */
function ambiguousName(name: string, found: readonly NamedCoworker[]): MirrorError {
  const count = found.length >= MAX_MATCHES ? `at least ${MAX_MATCHES}` : String(found.length);
  const named = found
    .slice(0, NAMED_MATCHES)
    .map((c) => `${JSON.stringify(clipName(c.name))} (uuid ${c.uuid}${c.removed ? ', removed' : ''})`);
  const more = found.length >= MAX_MATCHES ? 'and more' : `and ${found.length - NAMED_MATCHES} more`;
  const rest = found.length > NAMED_MATCHES ? [more] : [];
  return new MirrorError(
    'NAME_AMBIGUOUS',
    `--name ${JSON.stringify(name)} matches ${count} coworkers: ${[...named, ...rest].join(', ')}; ` +
      `give more of the name, or the uuid (\`history <uuid>\`; \`find ${JSON.stringify(name)}\` lists them)`,
    { name, count: found.length, matches: found.map((c) => ({ uuid: c.uuid, name: c.name })) },
  );
}

/** A name bounded for a message, cut between characters. */
function clipName(name: string): string {
  const chars = Array.from(name);
  return chars.length > 80 ? `${chars.slice(0, 79).join('')}…` : name;
}

/** `history <uuid>` or `history --name <text>`: versions as fields, then changes; exit 7 when unknown. */
export async function runHistoryCommand(
  config: Config,
  target: HistoryTarget,
  json: boolean,
  out: Output = stdoutOutput(),
): Promise<number> {
  return withExistingStoreAsync(config, async (store) => {
    const uuid = await resolveTarget(store, target);
    const history = await store.coworkerHistory(uuid);
    if (!history) {
      throw new MirrorError(
        'NOT_FOUND',
        `no coworker with uuid ${JSON.stringify(uuid)} in ${config.database.path}`,
        {
          uuid,
        },
      );
    }
    const coworker = coworkerView(history.coworker, await store.latestSucceededRun());
    const versions = history.versions.map(versionView);
    const changes = history.changes.map(changeView);
    // Only a history prune shortens a kept coworker's history: forgetting others leaves it whole.
    const { historyBefore } = await store.pruneHorizon();
    if (json) {
      out.write(stringifyJson({ type: 'coworker', ...coworker, pruned_before: historyBefore }));
      for (const v of versions) out.write(stringifyJson({ type: 'version', ...v }));
      for (const c of changes) out.write(stringifyJson({ type: 'change', ...c }));
      return EXIT.ok;
    }
    const name = (await store.namesOf([uuid])).get(uuid) ?? '?';
    for (const line of renderHistory({ coworker, name, versions, changes }, out.style)) out.write(line);
    const note = prunedWords({ historyBefore, removedBefore: null });
    if (note !== null) out.write(note);
    return EXIT.ok;
  });
}

/** `find <text>`: coworkers whose name contains the text, with their uuids for `history`. */
export async function runFindCommand(
  config: Config,
  text: string,
  json: boolean,
  out: Output = stdoutOutput(),
): Promise<number> {
  return withExistingStoreAsync(config, async (store) => {
    const found = await store.findByName(text);
    if (json) for (const c of found) out.write(JSON.stringify(c));
    else for (const line of renderFound(found, out.style)) out.write(line);
    return found.length > 0 ? EXIT.ok : EXIT.notFound;
  });
}

export interface ChangesOptions {
  since: string | undefined;
  until: string | undefined;
  field: string | undefined;
  uuid: string | undefined;
  kind: ChangeKind | undefined;
  /** At most this many; undefined: every change. */
  limit: number | undefined;
  json: boolean;
  csv?: boolean;
}

/** How many field names an unknown --field lists: an upstream may have drifted thousands. */
const FIELDS_NAMED = 12;

/** Changes read, worded and written per batch: the output holds one batch, whatever the history. */
const CHANGES_BATCH = 2000;

/** A field nobody ever had is a typo, not a quiet "no changes". */
async function checkField(store: Store, field: string | undefined): Promise<void> {
  if (field === undefined) return;
  const fields = [...new Set([...KNOWN_FIELDS, ...(await store.changedFields())])].filter(
    (f) => f !== 'uuid',
  );
  if (fields.includes(field)) return;
  const named = fields.slice(0, FIELDS_NAMED).map((f) => (f.length > 40 ? `${f.slice(0, 40)}…` : f));
  const more = fields.length - named.length;
  const rest = more > 0 ? ` and ${more} more (changes --json lists every change with its field)` : '';
  throw new ConfigError([
    {
      name: '--field',
      problem: `unknown field ${truncateForMessage(field, 80)}; the fields are ${named.join(', ')}${rest}`,
    },
  ]);
}

function changeStreamFilter(options: ChangesOptions): ChangeStreamFilter {
  const { since, until, field, uuid, kind, limit } = options;
  return Object.fromEntries(
    Object.entries({ since, until, field, uuid, kind, limit }).filter(([, v]) => v !== undefined),
  );
}

export async function runChangesCommand(
  config: Config,
  options: ChangesOptions,
  out: Output = stdoutOutput(),
): Promise<number> {
  return withExistingStoreAsync(config, async (store) => {
    await checkField(store, options.field);
    const filter = changeStreamFilter(options);
    if (options.json || options.csv === true) {
      // The export's module (and for CSV, the wording of each change) loads for an export only.
      const { changeExportTexts } = await import('../export/change-export.js');
      const format = options.csv === true ? 'csv' : 'jsonl';
      const chunks = changeExportTexts(store, filter, format, { batchSize: CHANGES_BATCH, parallel: true });
      for await (const chunk of chunks) {
        if (typeof chunk !== 'string' && out.writeBytes) out.writeBytes(chunk);
        else {
          const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
          // `write` adds the last line break itself (CSV's records end with CRLF, so its LF).
          if (out.writeText) out.writeText(text);
          else out.write(text.slice(0, -1));
        }
        await out.drained?.();
      }
      return EXIT.ok;
    }
    // The table aligns its columns over every row: it is written whole (as many as --limit asks).
    const rows: ChangeView[] = [];
    for await (const batch of store.changesInBatches(filter, CHANGES_BATCH))
      for (const row of batch) rows.push(changeView(row));
    const names = await store.namesOf(rows.map((c) => c.uuid));
    for (const line of renderChanges(rows, names, out.style)) out.write(line);
    const note = prunedWords(await store.pruneHorizon());
    if (note !== null) out.write(note);
    return EXIT.ok;
  });
}
