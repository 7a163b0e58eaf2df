import type { IdentityName } from '../enums.js';
import type { IdentityEntry } from '../store-identity.js';
import { one, type Queryable } from './sql.js';

/**
 * The twin of src/db/sqlite/identity.ts: the value kept under `name`, else `fresh()` kept from now
 * on, and whether this call kept it. On a transaction's client, a second asker's insert waits for
 * the first's transaction, then does nothing and reads the value the first kept.
 */
export async function identityEntry(
  db: Queryable,
  name: IdentityName,
  fresh: () => string,
): Promise<IdentityEntry> {
  const held = await keptIdentityValue(db, name);
  if (held !== undefined) return { value: held, created: false };
  const inserted = await one<{ value: string }>(
    db,
    `insert into store_identity (name, value, created_at) values ($1, $2, $3)
       on conflict (name) do nothing returning value`,
    [name, fresh(), new Date().toISOString()],
  );
  if (inserted !== undefined) return { value: inserted.value, created: true };
  const kept = await keptIdentityValue(db, name);
  if (kept === undefined) throw new Error(`store_identity lost its ${name} row as it was written`);
  return { value: kept, created: false };
}

/** The value kept under `name`, or undefined, without writing. */
export async function keptIdentityValue(db: Queryable, name: IdentityName): Promise<string | undefined> {
  return (await one<{ value: string }>(db, 'select value from store_identity where name = $1', [name]))
    ?.value;
}

/** The value kept under `name`, else `fresh()` kept from now on (see identityEntry). */
export async function identityValue(db: Queryable, name: IdentityName, fresh: () => string): Promise<string> {
  return (await identityEntry(db, name, fresh)).value;
}
