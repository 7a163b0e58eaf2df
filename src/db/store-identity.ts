import { randomUUID } from 'node:crypto';
import type { Store } from './store.js';

/**
 * This database's mirror id: a random UUID kept in `store_identity` the first time it is asked for.
 * A copy of the database carries it too; what owns a media folder tells a copy apart by its file.
 */
export function mirrorIdOf(store: Pick<Store, 'identityValue'>): Promise<string> {
  return store.identityValue('mirror_id', () => randomUUID());
}
