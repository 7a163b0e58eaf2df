import type { StoredListing } from '../queries.js';
import type { ListedEntry } from '../page-queries.js';
import type { RunRow } from '../schema.js';
import type { PgContext } from './context.js';
import { one, tuples } from './sql.js';

/**
 * The one definition of "the listing at run N" on PostgreSQL: the listing_positions spans run N
 * saw (`$1` is the run id), on the alias `lp`. The twin of src/db/sqlite/listing.ts's.
 */
export const LISTED_AT_RUN = 'lp.valid_from_run <= $1 and (lp.valid_to_run is null or lp.valid_to_run > $1)';

export async function listedVersionIds(ctx: PgContext, runId: number): Promise<Int32Array> {
  const ids = await tuples<[number]>(
    ctx.pool,
    `select lp.version_id from listing_positions lp where ${LISTED_AT_RUN} order by lp.position`,
    [runId],
  );
  return Int32Array.from(ids, ([id]) => id);
}

async function listedBodies(ctx: PgContext, runId: number): Promise<string[]> {
  const bodies = await tuples<[string]>(
    ctx.pool,
    `select v.body from listing_positions lp join versions v on v.id = lp.version_id
      where ${LISTED_AT_RUN} order by lp.position`,
    [runId],
  );
  return bodies.map(([body]) => body);
}

export async function optionsBody(ctx: PgContext, id: number): Promise<string | null> {
  return (
    (await one<{ body: string }>(ctx.pool, 'select body from options_bodies where id = $1', [id]))?.body ??
    null
  );
}

export async function listingAt(ctx: PgContext, run: RunRow): Promise<StoredListing> {
  const [entries, options] = await Promise.all([
    listedBodies(ctx, run.id),
    run.optionsBodyId === null ? null : optionsBody(ctx, run.optionsBodyId),
  ]);
  return { run, entries, optionsBody: options };
}

export async function versionBodies(ctx: PgContext, ids: ArrayLike<number>): Promise<(string | undefined)[]> {
  const wanted = Array.from(ids);
  if (wanted.length === 0) return [];
  const found = await tuples<[number, string]>(
    ctx.pool,
    'select id, body from versions where id = any($1::bigint[])',
    [[...new Set(wanted)]],
  );
  const byId = new Map(found);
  return wanted.map((id) => byId.get(id));
}

export async function listingPage(
  ctx: PgContext,
  runId: number,
  offset: number,
  limit: number,
): Promise<ListedEntry[]> {
  const found = await tuples<[number, string, number, string]>(
    ctx.pool,
    `select lp.position, v.uuid, v.slot, v.body
       from listing_positions lp join versions v on v.id = lp.version_id
      where lp.position >= $2 and lp.position < $3 and ${LISTED_AT_RUN}
      order by lp.position`,
    [runId, offset, offset + limit],
  );
  return found.map(([position, uuid, appearance, body]) => ({ position, uuid, appearance, body }));
}
