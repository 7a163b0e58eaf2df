import { describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/errors.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { rawUpstream } from '../helpers/raw-upstream.js';
import { sync } from '../helpers/sync.js';

// U+0000 is a character JSON may carry (escaped) and PostgreSQL's text may not. Entries and values
// are stored as JSON text, so only what is stored as text of its own can meet it: a field's name
// (a change names it), a media URL, a run's reason, which may quote the upstream, and the OPTIONS
// body, kept as received.

const UUID = `${'c'.repeat(31)}1`;
/** An entry as text: the contract's fields, then `extra` as it is. */
const entry = (extra = '') =>
  `{"uuid":"${UUID}","name":"Zoë\\u0000","post":"Dev","emoji_file":null,"emoji_file_webm":null,` +
  `"show_image":true,"images":[]${extra}}`;

async function failure(run: Promise<unknown>): Promise<MirrorError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof MirrorError)) throw new Error(`expected the run to fail, got ${String(error)}`);
  return error;
}

describe.each(STORE_KINDS)('U+0000 in what the upstream sends, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('a field named with U+0000 fails the run by page, entry and field; the history stays as it was', async () => {
    const store = await fresh();
    const upstream = await rawUpstream();
    upstream.serve([entry(',"note":1')]);
    await sync(store, upstream);
    const before = await store.listChanges({ limit: 100 });

    upstream.serve([entry(',"note":2,"a\\u0000b":1')]);
    const error = await failure(sync(store, upstream));
    expect(error.code).toBe('UPSTREAM_SCHEMA');
    expect(error.details).toMatchObject({ page: 1, index: 0, field: 'a\u0000b', uuid: `"${UUID}"` });
    const [run] = await store.listRuns({ limit: 1 });
    expect(run).toMatchObject({ status: 'failed', errorCode: 'UPSTREAM_SCHEMA' });
    expect(run?.errorMessage).toBe(
      `page 1, entry 0 (uuid "${UUID}"): field "a\\u0000b" has U+0000 (NUL) in its name, which no field ` +
        'name may hold; nothing was stored',
    );
    expect(await store.listChanges({ limit: 100 })).toEqual(before);
  });

  it("a run's reason that quotes U+0000 is recorded with the run, the character written as its escape", async () => {
    const store = await fresh();
    const upstream = await rawUpstream();
    upstream.serve([entry(',"a\\u0000b":[[[[1]]]]')]);
    const error = await failure(sync(store, upstream, { SYNC_MAX_ENTRY_DEPTH: '3' }));
    expect(error.code).toBe('UPSTREAM_SCHEMA');
    const [run] = await store.listRuns({ limit: 1 });
    expect(run).toMatchObject({
      status: 'failed',
      errorCode: 'UPSTREAM_SCHEMA',
      errorMessage: `page 1, entry 0 (uuid "${UUID}"): field "a\\u0000b" nests deeper than 3 levels (SYNC_MAX_ENTRY_DEPTH); nothing was stored`,
    });
  });

  it('a value holding U+0000 is mirrored: it is stored as JSON text', async () => {
    const store = await fresh();
    const upstream = await rawUpstream();
    upstream.serve([entry(',"note":"x\\u0000"')]);
    await sync(store, upstream);
    upstream.serve([entry(',"note":"y\\u0000"')]);
    await sync(store, upstream);
    const [change] = await store.listChanges({ kind: 'changed', limit: 1 });
    expect(change).toMatchObject({ field: 'note', oldValue: '"x\\u0000"', newValue: '"y\\u0000"' });
  });

  it('an OPTIONS body holding a raw U+0000 is not stored; the run succeeds and keeps the one before', async () => {
    const store = await fresh();
    const upstream = await rawUpstream();
    upstream.serve([entry()]);
    upstream.serveOptions('{"name": "Team"}');
    await sync(store, upstream);
    upstream.serveOptions('{"name": "Te\u0000am"}');
    upstream.serve([entry(',"note":1')]);
    await sync(store, upstream);
    expect(await storeRows(store, 'select body from options_bodies')).toEqual([{ body: '{"name": "Team"}' }]);
    const runs = await storeRows(store, 'select status, options_body_id from runs order by id');
    expect(runs).toEqual([
      { status: 'succeeded', options_body_id: 1 },
      { status: 'succeeded', options_body_id: 1 },
    ]);
  });

  it('a media URL holding U+0000 fails the run by page, entry and field', async () => {
    const store = await fresh();
    const upstream = await rawUpstream();
    const url = `${upstream.url}/media/a\\u0000b.png`;
    upstream.serve([entry().replace('"emoji_file":null', `"emoji_file":"${url}"`)]);
    const error = await failure(sync(store, upstream, { MEDIA_ORIGINS: upstream.url }));
    expect(error.code).toBe('UPSTREAM_SCHEMA');
    expect(error.message).toBe(
      `page 1, entry 0 (uuid "${UUID}"): field "emoji_file": expected a URL without U+0000 (NUL), ` +
        `received "${upstream.url}/media/a\\u0000b.png"`,
    );
    expect(await storeRows(store, 'select url from media_urls')).toEqual([]);
  });
});
