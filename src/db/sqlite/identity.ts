import type Database from 'better-sqlite3';
import type { IdentityName } from '../enums.js';
import type { IdentityEntry } from '../store-identity.js';

/**
 * The value named `name`: the one kept, else `fresh()` kept from now on. Two first askers at once
 * both read the value that was kept first: the insert does nothing when a row is there already, and
 * the value is read back. `created` tells the asker whose value was kept (what else it writes in the
 * same transaction happens once).
 */
export function identityEntry(
  sqlite: Database.Database,
  name: IdentityName,
  fresh: () => string,
): IdentityEntry {
  const read = sqlite.prepare('select value from store_identity where name = ?').pluck();
  const held = read.get(name) as string | undefined;
  if (held !== undefined) return { value: held, created: false };
  const { changes } = sqlite
    .prepare(
      'insert into store_identity (name, value, created_at) values (?, ?, ?) on conflict (name) do nothing',
    )
    .run(name, fresh(), new Date().toISOString());
  return { value: read.get(name) as string, created: changes === 1 };
}

/** The value kept under `name`, else `fresh()` kept from now on (see identityEntry). */
export function identityValue(sqlite: Database.Database, name: IdentityName, fresh: () => string): string {
  return identityEntry(sqlite, name, fresh).value;
}

/**
 * The value kept under `name`, or undefined, without writing: for a database opened read-only, or
 * one whose `store_identity` a pending migration is still to add.
 */
export function keptIdentityValue(sqlite: Database.Database, name: IdentityName): string | undefined {
  const table = sqlite.prepare(
    "select 1 from sqlite_master where type = 'table' and name = 'store_identity'",
  );
  if (table.get() === undefined) return undefined;
  return sqlite.prepare('select value from store_identity where name = ?').pluck().get(name) as
    string | undefined;
}
