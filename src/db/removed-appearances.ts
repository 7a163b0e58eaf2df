import type { RemovedAppearance } from './run-commit.js';
import type { SqlPort } from './sql-port.js';

/**
 * A uuid's slots one index seek each (the next slot after the last, on versions_slot_idx), then
 * each slot's newest version by one more: what it costs does not grow with the versions a slot
 * has had, which a run that changes every entry adds to each time. SQLite answers one uuid a
 * statement (each `?` is that uuid), in process; PostgreSQL every uuid in one round trip (the one
 * `?` is their array), each slot's newest version by a lateral seek.
 */
export const REMOVED_APPEARANCES_SQL = {
  sqlite: `
  with recursive slots(slot) as (
    select min(slot) from versions where uuid = ?
    union all
    select (select min(w.slot) from versions w where w.uuid = ? and w.slot > slots.slot)
      from slots where slots.slot is not null
  )
  select v.id, v.uuid, v.slot, v.body_hash, v.body
    from slots
    join versions v on v.id = (select max(w.id) from versions w where w.uuid = ? and w.slot = slots.slot)
   where v.valid_to_run is not null
   order by v.slot`,
  postgres: `
  with recursive slots(uuid, slot) as (
    select u.uuid, (select min(w.slot) from versions w where w.uuid = u.uuid)
      from unnest(?::text[]) as u(uuid)
    union all
    select s.uuid, (select min(w.slot) from versions w where w.uuid = s.uuid and w.slot > s.slot)
      from slots s where s.slot is not null
  )
  select v.id, v.uuid, v.slot, v.body_hash, v.body
    from slots s
    cross join lateral (
      select w.id, w.uuid, w.slot, w.body_hash, w.body, w.valid_to_run from versions w
       where w.uuid = s.uuid and w.slot = s.slot order by w.id desc limit 1
    ) v
   where s.slot is not null and v.valid_to_run is not null
   order by v.uuid, v.slot`,
} as const;

type Found = [versionId: number, uuid: string, slot: number, hash: string | null, body: string];

/**
 * The removed appearances of these uuids, in the order of `uuids` and each uuid's by slot: each
 * slot whose newest version is closed left the listing and has not come back.
 */
export async function removedAppearances(
  port: SqlPort,
  uuids: readonly string[],
  hashOf: (body: string) => string,
): Promise<RemovedAppearance[]> {
  if (uuids.length === 0) return [];
  const unique = [...new Set(uuids)];
  const ofOne = (uuid: string) => port.rows<Found>(REMOVED_APPEARANCES_SQL.sqlite, [uuid, uuid, uuid]);
  const found =
    port.dialect === 'postgres'
      ? await port.rows<Found>(REMOVED_APPEARANCES_SQL.postgres, [unique])
      : (await Promise.all(unique.map(ofOne))).flat();
  const byUuid = new Map<string, RemovedAppearance[]>();
  for (const [versionId, uuid, slot, hash, body] of found) {
    const list = byUuid.get(uuid) ?? [];
    list.push({ versionId, uuid, slot, hash: hash ?? hashOf(body), body });
    byUuid.set(uuid, list);
  }
  return uuids.flatMap((uuid) => byUuid.get(uuid) ?? []);
}
