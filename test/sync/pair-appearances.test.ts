import { describe, expect, it } from 'vitest';
import { changeView } from '../../src/views/history-views.js';
import { changedFieldCount, pairByFewestChanges, type FieldMap } from '../../src/sync/pair-appearances.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';

// The example docs/reliability.md gives of the pairing's one rule, the fewest changed fields in all:
// two rows of one uuid; the second is deleted, and the first's post, image and emoji are edited to
// the second's. The listing has no key but the uuid, and the row left differs from the second by
// its name only (2) and from the first by three fields (3): the mirror records the first removed
// and the second renamed, not what a person did.

const UUID = 'feed0000000000000000000000000042';
const media = (file: string): string => `https://media.example.com/${file}`;
const north = {
  uuid: UUID,
  name: 'Team North',
  post: 'Support',
  emoji_file: media('north.gif'),
  emoji_file_webm: null,
  show_image: true,
  images: [media('north.png')],
};
const south = {
  uuid: UUID,
  name: 'Team South',
  post: 'Support lead',
  emoji_file: media('south.gif'),
  emoji_file_webm: null,
  show_image: true,
  images: [media('south.png')],
};
/** South deleted; North's post, image and emoji edited to South's. */
const northEdited = { ...north, post: south.post, emoji_file: south.emoji_file, images: south.images };

const fields = (entry: Record<string, unknown>): FieldMap =>
  new Map(Object.entries(entry).map(([field, value]) => [field, JSON.stringify(value)]));

describe('pairByFewestChanges', () => {
  it('pairs the row left with the appearance it differs least from, even when that one was deleted', () => {
    expect(changedFieldCount(fields(north), fields(northEdited))).toBe(3);
    expect(changedFieldCount(fields(south), fields(northEdited))).toBe(2);
    // [old index, new index]: the second appearance (South) goes on as the row left; North, unpaired, is removed.
    expect(pairByFewestChanges([fields(north), fields(south)], [fields(northEdited)])).toEqual([[1, 0]]);
  });

  it('pairs the edited appearance when its edit costs less than the name that tells the two apart', () => {
    // South deleted, North's post alone edited to South's: 1 against 2 + 2 (name, images, emoji).
    const postOnly = { ...north, post: south.post };
    expect(pairByFewestChanges([fields(north), fields(south)], [fields(postOnly)])).toEqual([[0, 0]]);
  });
});

describe.each(STORE_KINDS)('the pairing through two syncs, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('records the example of docs/reliability.md as the first appearance removed, the second renamed', async () => {
    const store = await fresh();
    const other = {
      ...north,
      uuid: 'feed0000000000000000000000000007',
      name: 'Ines Ortolan',
      post: 'Designer',
    };
    const upstream = await simulatedUpstream({ entries: [north, other, south] });
    expect((await sync(store, upstream)).counts.added).toBe(3);
    upstream.data.setEntries([northEdited, other]);
    const second = await sync(store, upstream);
    expect(second.counts).toEqual({ added: 0, changed: 1, removed: 1, returned: 0, unchanged: 1 });
    const changes = await store.listChanges({ limit: 10 });
    expect(
      changes
        .filter((c) => c.runId === second.runId)
        .map(changeView)
        .map(({ id: _id, at: _at, ...rest }) => rest),
    ).toEqual([
      // Removals come after the changes placed in the listing, as the run wrote them; newest first here.
      { run: second.runId, uuid: UUID, appearance: 0, kind: 'removed', old: north },
      {
        run: second.runId,
        uuid: UUID,
        appearance: 1,
        kind: 'changed',
        field: 'name',
        old: 'Team South',
        new: 'Team North',
      },
    ]);
  });
});
