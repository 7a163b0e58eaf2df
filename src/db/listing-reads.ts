import type { SqlPort } from './sql-port.js';
import type { RunRow } from './schema.js';
import type { ListedEntry, StoredListing } from './store.js';

// The listing a run stored, read once for both dialects over the port: what a snapshot is built of.

/**
 * The one definition of "the listing at run N": the listing_positions spans run N saw (two `?`,
 * both the run id), on the alias `lp`. Every read of a run's listing filters with it.
 */
const LISTED_AT_RUN = 'lp.valid_from_run <= ? and (lp.valid_to_run is null or lp.valid_to_run > ?)';

/** The version ids listed by run `runId`, in listing order: one indexed read of integers. */
export async function listedVersionIds(port: SqlPort, runId: number): Promise<Int32Array> {
  const ids = await port.values<number>(
    `select lp.version_id from listing_positions lp where ${LISTED_AT_RUN} order by lp.position`,
    [runId, runId],
  );
  return Int32Array.from(ids);
}

export async function optionsBody(port: SqlPort, id: number): Promise<string | null> {
  const [body] = await port.values<string>('select body from options_bodies where id = ?', [id]);
  return body ?? null;
}

export async function listingAt(port: SqlPort, run: RunRow): Promise<StoredListing> {
  const [entries, options] = await Promise.all([
    port.values<string>(
      `select v.body from listing_positions lp join versions v on v.id = lp.version_id
        where ${LISTED_AT_RUN} order by lp.position`,
      [run.id, run.id],
    ),
    run.optionsBodyId === null ? null : optionsBody(port, run.optionsBodyId),
  ]);
  return { run, entries, optionsBody: options };
}

export async function versionBodies(port: SqlPort, ids: ArrayLike<number>): Promise<(string | undefined)[]> {
  const wanted = Array.from(ids);
  if (wanted.length === 0) return [];
  const among = port.oneOf('id', 'bigint', [...new Set(wanted)]);
  const found = await port.rows<[number, string]>(`select id, body from versions where ${among.sql}`, [
    among.param,
  ]);
  const byId = new Map(found);
  return wanted.map((id) => byId.get(id));
}

/**
 * Positions [offset, offset + limit) of the listing served after run `runId`: one range seek on
 * (position, valid_from_run) instead of a scan of every span that started before the run (SQLite's
 * planner is told the index; PostgreSQL's finds it).
 */
export async function listingPage(
  port: SqlPort,
  runId: number,
  offset: number,
  limit: number,
): Promise<ListedEntry[]> {
  const hint = port.dialect === 'sqlite' ? 'indexed by listing_positions_position_idx' : '';
  const found = await port.rows<[number, string, number, string]>(
    `select lp.position, v.uuid, v.slot, v.body
       from listing_positions lp ${hint}
       join versions v on v.id = lp.version_id
      where lp.position >= ? and lp.position < ? and ${LISTED_AT_RUN}
      order by lp.position`,
    [offset, offset + limit, runId, runId],
  );
  return found.map(([position, uuid, appearance, body]) => ({ position, uuid, appearance, body }));
}
