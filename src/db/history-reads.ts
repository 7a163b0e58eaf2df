import type { SqlPort } from './sql-port.js';
import type { VersionRow } from './schema.js';

// Coworkers and their versions, read once for both dialects over the port.

/** Every column of `versions`, in `VersionRow`'s order (the API serialises the rows as read). */
const VERSION_COLUMNS = 'id, uuid, slot, body, body_hash, valid_from_run, valid_to_run';
type VersionTuple = [number, string, number, string, string | null, number, number | null];

const versionRow = ([
  id,
  uuid,
  slot,
  body,
  bodyHash,
  validFromRun,
  validToRun,
]: VersionTuple): VersionRow => ({
  id,
  uuid,
  slot,
  body,
  bodyHash,
  validFromRun,
  validToRun,
});

/**
 * The current appearances of one coworker (empty when tombstoned), by slot. A sync never leaves two
 * current versions of one slot, but the order is total all the same: the id breaks a tie.
 */
export async function currentVersions(port: SqlPort, uuid: string): Promise<VersionRow[]> {
  const found = await port.rows<VersionTuple>(
    `select ${VERSION_COLUMNS} from versions where uuid = ? and valid_to_run is null order by slot, id`,
    [uuid],
  );
  return found.map(versionRow);
}
