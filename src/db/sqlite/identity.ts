import type { IdentityName } from '../enums.js';
import type { MirrorDatabase } from '../open.js';

/**
 * The value named `name`: the one kept, else `fresh()` kept from now on. Two first askers at once
 * both read the value that was kept first.
 */
export function identityValue(store: MirrorDatabase, name: IdentityName, fresh: () => string): string {
  const read = store.sqlite.prepare('select value from store_identity where name = ?').pluck();
  const held = read.get(name) as string | undefined;
  if (held !== undefined) return held;
  store.sqlite
    .prepare(
      'insert into store_identity (name, value, created_at) values (?, ?, ?) on conflict (name) do nothing',
    )
    .run(name, fresh(), new Date().toISOString());
  return read.get(name) as string;
}
