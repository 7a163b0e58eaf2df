import { describe, expect, it } from 'vitest';
import type { NotifyMessage } from '../../src/notify/message.js';
import { emailContent } from '../../src/notify/formats/email-format.js';
import { discordPayload, slackPayload, teamsPayload } from '../../src/notify/formats/chat-formats.js';
import { pictureOf } from '../../src/notify/thumbnails.js';
import { mediaRig, rowsOf, type RigStore } from '../media/harness.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

const BASE = 'https://mirror.example.com';
const TARGET = 'ntfy+http://127.0.0.1:9/topic';

async function storedMessage(rig: { store: RigStore }): Promise<NotifyMessage> {
  const [row] = await rowsOf(rig.store, 'webhook_messages', 'body');
  return JSON.parse(String(row?.body)) as NotifyMessage;
}

describe('thumbnails in messages: the mirror’s own media, never the upstream’s (issue 22)', () => {
  it('with PUBLIC_BASE_URL and the bytes mirrored, each line shows its picture from the mirror', async () => {
    const rig = await mediaRig({ count: 3 });
    // A first sync is told as a count, without lines: the pictures are those of the next run's people.
    await rig.sync();
    rig.upstream.data.add(3);
    await rig.sync({ NOTIFY_URLS: TARGET, PUBLIC_BASE_URL: BASE });
    const message = await storedMessage(rig);
    const images = message.lines.map((l) => l.imageUrl);
    expect(images.some((i) => i !== null)).toBe(true);
    for (const image of images.filter((i) => i !== null)) {
      expect(image).toMatch(
        /^https:\/\/mirror\.example\.com\/media\/[0-9a-f]{64}\/[^/]+\.(png|jpe?g|gif|webp)$/,
      );
    }
    // Each service that shows images gets the mirror's URL, the e-mail included; none names the media host.
    const first = images.find((i) => i !== null) ?? '';
    const slack = JSON.stringify(slackPayload(message));
    const discord = JSON.stringify(discordPayload(message));
    const teams = JSON.stringify(teamsPayload(message));
    const email = emailContent(message).html;
    for (const shown of [slack, discord, teams, email]) {
      expect(shown).toContain(first);
      expect(shown).not.toContain(rig.host.url);
    }
  });

  it('with INTERNAL_PORT, names link to the pages at INTERNAL_BASE_URL (or nowhere), pictures stay on PUBLIC_BASE_URL', async () => {
    const rig = await mediaRig({ count: 3 });
    await rig.sync();
    rig.upstream.data.add(3);
    const split = { NOTIFY_URLS: TARGET, PUBLIC_BASE_URL: BASE, INTERNAL_PORT: '8001' };
    await rig.sync({ ...split, INTERNAL_BASE_URL: 'http://mirror.internal:8001/' });
    const told = await storedMessage(rig);
    expect(told.lines).toHaveLength(3);
    for (const line of told.lines) {
      expect(line.whoUrl).toMatch(/^http:\/\/mirror\.internal:8001\/coworkers\/[0-9a-z-]+\/$/);
    }
    expect(told.link?.url).toMatch(/^http:\/\/mirror\.internal:8001\//);
    const images = told.lines.map((l) => l.imageUrl).filter((i) => i !== null);
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image.startsWith(`${BASE}/media/`)).toBe(true);

    // The pages do not answer on PUBLIC_BASE_URL then: no link at all rather than PORT's 404.
    const bare = await mediaRig({ count: 3 });
    await bare.sync();
    bare.upstream.data.add(3);
    await bare.sync(split);
    const unlinked = await storedMessage(bare);
    expect(unlinked.lines.map((l) => l.whoUrl)).toEqual([null, null, null]);
    expect(unlinked.link).toBeNull();
    expect(unlinked.lines.some((l) => l.imageUrl?.startsWith(`${BASE}/media/`) === true)).toBe(true);
  });

  it('without PUBLIC_BASE_URL, or without the bytes, no thumbnail at all', async () => {
    const rig = await mediaRig({ count: 3 });
    await rig.sync();
    rig.upstream.data.add(3);
    await rig.sync({ NOTIFY_URLS: TARGET });
    expect((await storedMessage(rig)).lines.map((l) => l.imageUrl)).toEqual([null, null, null]);

    // Media not mirrored (no MEDIA_ORIGINS): the upstream's pictures are not shown.
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 7, count: 3 });
    await sync(store, upstream);
    upstream.data.add(3);
    await sync(store, upstream, { NOTIFY_URLS: TARGET, PUBLIC_BASE_URL: BASE });
    const body = store.sqlite.prepare('select body from webhook_messages').pluck().get() as string;
    expect((JSON.parse(body) as NotifyMessage).lines.map((l) => l.imageUrl)).toEqual([null, null, null]);
  });

  it.each([
    [
      '{"images":["https://m.example/a.png"],"emoji_file":"https://m.example/e.gif"}',
      'https://m.example/a.png',
    ],
    ['{"images":[],"emoji_file":"https://m.example/e.gif"}', 'https://m.example/e.gif'],
    ['{"images":["https://m.example/a.png"],"show_image":false}', null],
    ['{"images":[],"emoji_file":"https://m.example/e.mp4"}', null],
    ['{"images":["javascript:alert(1)//.png"]}', null],
    ['[1]', null],
    ['not json', null],
  ])('the picture of %s is %s', (entry, picture) => {
    expect(pictureOf(entry)).toBe(picture);
  });
});
