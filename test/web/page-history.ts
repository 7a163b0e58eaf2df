import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';
import type { MirrorDatabase } from '../../src/db/open.js';
import type { Store } from '../../src/db/store.js';
import { untilTestEnds, type Defer } from '../helpers/scope.js';
import { tempDatabase } from '../helpers/temp-db.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';

/**
 * A real history for the page tests, written by real syncs of a loopback upstream: joins, a post
 * change, a departure, a return, a uuid listed twice, hostile text (markup, right-to-left, U+2028,
 * CDATA ends, a control character, a 1 MB post), images served by a loopback media host, and a last
 * run that failed. Every name below is invented.
 */

export const UUID = {
  zoe: 'zoe00000000000000000000000000001',
  jose: 'jose0000000000000000000000000002',
  kate: 'kate0000000000000000000000000003',
  sean: 'sean0000000000000000000000000004',
  ada: 'ada00000000000000000000000000005',
  script: 'script00000000000000000000000006',
  rtl: 'rtl00000000000000000000000000007',
  big: 'big00000000000000000000000000008',
  tess: 'tess0000000000000000000000000009',
} as const;

export const HOSTILE_NAME = '</script><script>alert(1)</script>';
export const RTL_NAME = 'مريم الحسن';
export const TESS_NAME = 'Tess ]]> \u0001 Bell';
export const BIG_POST = 'x'.repeat(1024 * 1024);

/** A valid 1×1 PNG, so every thumbnail loads. */
function tinyPng(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = (crcTable[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const pixel = deflateSync(Buffer.from([0, 0x4a, 0x90, 0xe2, 0xff]));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixel),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A loopback media host answering every GET with the PNG; it counts what it served. */
async function mediaHost(defer: Defer): Promise<{ url: string; served: string[] }> {
  const png = tinyPng();
  const served: string[] = [];
  const server = createServer((req, res) => {
    served.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length });
    res.end(png);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, served };
}

function person(
  uuid: string,
  name: string,
  post: string,
  media: string,
  extra: Record<string, unknown> = {},
) {
  return {
    uuid,
    name,
    post,
    emoji_file: null,
    emoji_file_webm: null,
    show_image: true,
    images: [`${media}/media/team/${uuid}.png`],
    ...extra,
  };
}

export interface PageHistory<S extends Store = MirrorDatabase> {
  store: S;
  mediaUrl: string;
  mediaServed: string[];
}

/** A mirror configured for big entries (SYNC_MAX_ENTRY_BYTES=2MiB): the 1 MB post must be stored to be shown. */
const BIG_ENTRIES = { SYNC_MAX_ENTRY_BYTES: String(2 * 1024 * 1024) };

/**
 * Builds the history, in a new SQLite file or in the empty `store` given; what it starts stops when
 * the test ends, or when `defer` says.
 */
export async function buildPageHistory(defer?: Defer): Promise<PageHistory>;
export async function buildPageHistory<S extends Store>(defer: Defer, store: S): Promise<PageHistory<S>>;
export async function buildPageHistory(
  defer: Defer = untilTestEnds,
  given?: Store,
): Promise<PageHistory<Store>> {
  const store = given ?? tempDatabase(defer);
  const media = await mediaHost(defer);
  const m = media.url;
  const upstream = await simulatedUpstream({ entries: [], pageSize: 8 }, defer);
  const base = [
    person(UUID.jose, 'José Álvarez', 'qa engineer', m),
    person(UUID.kate, 'Kate', 'Designer', m, { emoji_file: `${m}/media/emoji/kate.mp4` }),
    person(UUID.sean, 'Seán', 'Support', m),
    person(UUID.ada, 'Ada', 'Engineer', m),
    person(UUID.ada, 'Ada', 'Engineer (second listing)', m, { images: [] }),
    person(UUID.script, HOSTILE_NAME, 'Red team\u2028lead', m),
    person(UUID.rtl, RTL_NAME, 'مهندسة', m),
    person(UUID.big, 'Bo Large', BIG_POST, m),
    person(UUID.tess, TESS_NAME, 'Ops', m),
  ];
  upstream.data.setEntries(base);
  await sync(store, upstream, BIG_ENTRIES);
  // Run 2: Zoë joins, José's post changes, Kate and Seán leave.
  upstream.data.setEntries([
    person(UUID.zoe, 'Zoë', 'QA engineer', m),
    ...base
      .filter((e) => e.uuid !== UUID.kate && e.uuid !== UUID.sean)
      .map((e) => (e.uuid === UUID.jose ? { ...e, post: 'QA lead' } : e)),
  ]);
  await sync(store, upstream, BIG_ENTRIES);
  // Run 3: Seán returns; Zoë gets a new photo.
  upstream.data.setEntries([
    person(UUID.zoe, 'Zoë', 'QA engineer', m, { images: [`${m}/media/team/zoe-2.png`] }),
    ...base
      .filter((e) => e.uuid !== UUID.kate)
      .map((e) => (e.uuid === UUID.jose ? { ...e, post: 'QA lead' } : e)),
  ]);
  await sync(store, upstream, BIG_ENTRIES);
  // Run 4 fails: an entry breaks the contract.
  upstream.data.setEntries([{ ...person(UUID.zoe, 'Zoë', 'QA engineer', m), post: 5 }]);
  await sync(store, upstream, BIG_ENTRIES).catch(() => undefined);
  return { store, mediaUrl: m, mediaServed: media.served };
}
