import { randomUUID } from 'node:crypto';
import type { Store } from './store.js';

/** A named value of `store_identity`, and whether the call that read it is the one that kept it. */
export interface IdentityEntry {
  value: string;
  created: boolean;
}

/**
 * This database's mirror id: a random UUID kept in `store_identity` the first time it is asked for.
 * A copy of the database carries it too; what owns a media folder tells a copy apart by its file.
 */
export function mirrorIdOf(store: Pick<Store, 'identityValue'>): Promise<string> {
  return store.identityValue('mirror_id', () => randomUUID());
}
