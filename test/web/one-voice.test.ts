import { parse as parseCsv } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

/** Issue 22, section 5: one numbering, one zone, one wording on every surface. Every name is invented. */

const TWICE = 'twice000000000000000000000000001';

function entry(post: string, extra: Record<string, unknown> = {}) {
  return {
    uuid: TWICE,
    name: 'Mireille Okafor',
    post,
    emoji_file: null,
    emoji_file_webm: null,
    show_image: false,
    images: [],
    ...extra,
  };
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();

/** A uuid listed twice: run 2 changes appearance 1, run 3 appearance 2, run 4 removes appearance 2. */
async function listedTwice() {
  const store = tempDatabase();
  const upstream = await simulatedUpstream({ entries: [] });
  const runs: Record<string, unknown>[][] = [
    [entry('Editor'), entry('Translator')],
    [entry('Senior editor'), entry('Translator')],
    [entry('Senior editor'), entry('Lead translator')],
    [entry('Senior editor')],
  ];
  for (const entries of runs) {
    upstream.data.setEntries(entries);
    await sync(store, upstream);
  }
  return { store, mirror: await startMirror(store) };
}

describe('appearances of a uuid listed twice', () => {
  it('are numbered from 1 on the timeline, the coworker page, the CSV and the feed', async () => {
    const { mirror } = await listedTwice();
    const timeline = text(await (await fetch(`${mirror.url}/changes/`)).text());
    expect(timeline).toContain('Mireille Okafor (appearance 2) left');
    expect(timeline).toContain('Mireille Okafor (appearance 2): post Translator → Lead translator');
    expect(timeline).toContain('Mireille Okafor: post Editor → Senior editor');
    const csv = parseCsv<Record<string, string>>(
      await (await fetch(`${mirror.url}/api/mirror/changes.csv`)).text(),
      { bom: true, columns: true },
    );
    expect(csv.map((r) => [r.kind, r.appearance, r.sentence])).toEqual([
      ['removed', '2', 'Mireille Okafor (appearance 2) left'],
      ['changed', '2', "Mireille Okafor (appearance 2): post 'Translator' → 'Lead translator'"],
      ['changed', '1', "Mireille Okafor: post 'Editor' → 'Senior editor'"],
      ['added', '2', 'Mireille Okafor (appearance 2) joined as Translator'],
      ['added', '1', 'Mireille Okafor joined as Editor'],
    ]);
    const atom = await (await fetch(`${mirror.url}/api/mirror/changes.atom`)).text();
    expect(atom).toContain('Mireille Okafor (appearance 2) left');
  });

  it('on the coworker page each appearance has its versions together, and a removed one says so', async () => {
    const { mirror } = await listedTwice();
    const html = await (await fetch(`${mirror.url}/coworkers/${TWICE}/`)).text();
    const sections = [...html.matchAll(/<section aria-label="(Appearance \d)">([\s\S]*?)<\/section>/g)].map(
      (m) => [m[1], text((m[2] ?? '').replace(/<\/(p|h3|li|dd|dt)>/g, ' '))] as const,
    );
    expect(sections.map(([label]) => label)).toEqual(['Appearance 1', 'Appearance 2']);
    const [first, second] = sections.map(([, body]) => body);
    expect(first).not.toContain('Removed');
    expect(first?.match(/From run \d/g)).toEqual(['From run 2', 'From run 1']);
    expect(first).toContain('post: Editor → Senior editor');
    expect(second).toMatch(/^Appearance 2 Removed in run 4 \(.+\)\. From run 3 /);
    expect(second?.match(/From run \d/g)).toEqual(['From run 3', 'From run 1']);
    expect(second).toContain('post: Translator → Lead translator');
  });
});
