import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mirrorIdOf } from '../../src/db/store-identity.js';
import { readLocalSnapshot, LOCAL_SNAPSHOT_FILE } from '../../src/http/local-snapshot-file.js';
import { eventually } from '../helpers/process.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase, tempDir } from '../helpers/temp-db.js';

/** Room enough for the tests' listings. */
const MAX_BYTES = 10 * 1024 * 1024;

/** A SQLite mirror of 20 coworkers served with a media folder: its local snapshot, once written. */
async function servedMirror() {
  const store = tempDatabase();
  const upstream = await simulatedUpstream({ seed: 41, count: 20 });
  await sync(store, upstream);
  const dir = tempDir();
  const server = await startMirror(store, { media: { dir, rewrite: false } });
  const file = join(dir, LOCAL_SNAPSHOT_FILE);
  const read = await eventually(async () => {
    const found = await readLocalSnapshot(file, MAX_BYTES);
    return found.kind === 'found' ? found : undefined;
  });
  return { store, upstream, server, file, read };
}

describe('the local snapshot a server keeps in its media folder', () => {
  it('on SQLite too: is written when a snapshot is swapped in, and reads back as the very snapshot served', async () => {
    const { store, server, read } = await servedMirror();
    const served = server.snapshots.current;
    const info = server.snapshots.info;
    expect(served).not.toBeNull();
    const { prepared, ...rest } = read.snapshot;
    expect(rest).toEqual({
      mirrorId: await mirrorIdOf(store),
      database: store.file,
      run: info,
      media: [],
    });
    expect({
      id: prepared.id,
      count: prepared.count,
      pageSize: prepared.pageSize,
      numPages: prepared.numPages,
      pageTails: prepared.pageTails.map((tail) => tail.toString('utf8')),
      entryValues: [...prepared.entryValues],
      options: { compact: prepared.options.compact.toString('utf8'), value: prepared.options.value },
      lastModified: prepared.lastModified,
      fetchedAtIso: prepared.fetchedAtIso,
    }).toEqual({
      id: served?.id,
      count: served?.count,
      pageSize: served?.pageSize,
      numPages: served?.numPages,
      pageTails: served?.pageTails.map((tail) => tail.toString('utf8')),
      entryValues: [...(served?.entryValues ?? [])],
      options: { compact: served?.options.compact.toString('utf8'), value: served?.options.value },
      lastModified: served?.lastModified,
      fetchedAtIso: served?.fetchedAtIso,
    });
  });

  it('is replaced by the next run swapped in', async () => {
    const { store, upstream, server, file } = await servedMirror();
    upstream.data.add(2);
    await sync(store, upstream);
    await server.snapshots.refresh();
    const read = await eventually(async () => {
      const found = await readLocalSnapshot(file, MAX_BYTES);
      return found.kind === 'found' && found.snapshot.run.runId === 2 ? found : undefined;
    });
    expect([read.snapshot.run.entries, read.snapshot.prepared.count]).toEqual([22, 22]);
  });

  it('is refused, naming the file and why, when it is torn, altered, not one, over its bound or missing', async () => {
    const { file } = await servedMirror();
    const good = readFileSync(file);
    const flipped = Buffer.from(good);
    flipped[100] = (flipped[100] ?? 0) ^ 0x20;
    const cases: [string, Buffer | null, number, string][] = [
      ['a byte flipped', flipped, MAX_BYTES, 'its checksum does not match: the file is torn or altered'],
      [
        'cut short',
        good.subarray(0, good.length - 7),
        MAX_BYTES,
        'its checksum does not match: the file is torn or altered',
      ],
      [
        'another kind of file',
        Buffer.from('{"not":"a snapshot"}\n'.repeat(4)),
        MAX_BYTES,
        'not a snapshot file this version writes',
      ],
      ['over its bound', good, 1000, `${good.length} bytes, over the bound of 1000`],
      ['missing', null, MAX_BYTES, 'no local snapshot there (none was written yet)'],
    ];
    const outcomes: { name: string; read: unknown }[] = [];
    const expected: { name: string; read: unknown }[] = [];
    for (const [name, bytes, maxBytes, why] of cases) {
      const at = join(tempDir(), LOCAL_SNAPSHOT_FILE);
      if (bytes !== null) writeFileSync(at, bytes);
      outcomes.push({ name, read: await readLocalSnapshot(at, maxBytes) });
      expected.push({ name, read: { kind: 'refused', reason: `${at}: ${why}` } });
    }
    expect(outcomes).toEqual(expected);
  });
});
