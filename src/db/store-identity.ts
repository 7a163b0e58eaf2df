import { randomUUID } from 'node:crypto';
import type { IdentityName } from './enums.js';
import type { SqlPort } from './sql-port.js';
import { answeredOver, ask, type Steps } from './statement-steps.js';
import type { Store } from './store.js';

/**
 * This database's mirror id: a random UUID kept in `store_identity` the first time it is asked for.
 * A copy of the database carries it too; what owns a media folder tells a copy apart by its file.
 */
export function mirrorIdOf(store: Pick<Store, 'identityValue'>): Promise<string> {
  return store.identityValue('mirror_id', () => randomUUID());
}

/**
 * The value named `name`: the one kept, else `fresh()` kept from now on. Two first askers at once
 * both read the value that was kept first: the insert does nothing when a row is there already (in
 * a transaction, it waits for the first's to commit), and the value is read back. `created` tells
 * the asker whose value was kept (what else it writes in the same transaction happens once).
 */
export function* identityEntry(
  name: IdentityName,
  fresh: () => string,
): Steps<{ value: string; created: boolean }> {
  const read = 'select value from store_identity where name = ?';
  const [held] = yield* ask<[string][]>('rows', read, [name]);
  if (held !== undefined) return { value: held[0], created: false };
  const inserted = yield* ask<number>(
    'run',
    'insert into store_identity (name, value, created_at) values (?, ?, ?) on conflict (name) do nothing',
    [name, fresh(), new Date().toISOString()],
  );
  const [kept] = yield* ask<[string][]>('rows', read, [name]);
  if (kept === undefined) throw new Error(`store_identity lost its ${name} row as it was written`);
  return { value: kept[0], created: inserted === 1 };
}

/** The value kept under `name`, else `fresh()` kept from now on (see identityEntry). */
export async function identityValue(port: SqlPort, name: IdentityName, fresh: () => string): Promise<string> {
  return (await answeredOver(port, identityEntry(name, fresh))).value;
}
