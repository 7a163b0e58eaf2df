import type { OutboxFacts } from '../db/run-commit.js';
import type { ChangeRow } from '../db/schema.js';

/** Files every service that shows images (and every mail client) shows; not the .mp4/.webm emoji. */
const IMAGE_FILE = /\.(png|jpe?g|gif|webp)$/i;

/** The picture an entry shows, as the team page's card picks it: the first image, else the emoji file. */
export function pictureOf(entryText: string): string | null {
  let entry: unknown;
  try {
    entry = JSON.parse(entryText);
  } catch {
    return null;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return null;
  const fields = entry as Record<string, unknown>;
  if (fields.show_image === false) return null;
  const images = Array.isArray(fields.images) ? (fields.images as unknown[]) : [];
  const picture = images[0] ?? fields.emoji_file ?? null;
  if (typeof picture !== 'string' || !/^https?:\/\//i.test(picture) || !URL.canParse(picture)) return null;
  return IMAGE_FILE.test(new URL(picture).pathname) ? picture : null;
}

/**
 * Each change's thumbnail: the mirror's own URL (PUBLIC_BASE_URL + its /media path) of the picture,
 * only when the mirror holds those bytes. Never the upstream's URL: a message must not make every
 * reader's mail client or chat service fetch from the upstream, nor show what may be gone.
 */
export function thumbnailsOf(
  rows: readonly ChangeRow[],
  facts: Pick<OutboxFacts, 'entriesOf' | 'mirrorPathOf'>,
  baseUrl: string | null,
): Map<number, string> {
  const out = new Map<number, string>();
  if (baseUrl === null || rows.length === 0) return out;
  const entries = facts.entriesOf(rows);
  for (const row of rows) {
    const entry = entries.get(row.id);
    const picture = entry === undefined ? null : pictureOf(entry);
    const path = picture === null ? null : facts.mirrorPathOf(picture);
    if (path !== null) out.set(row.id, `${baseUrl}${path}`);
  }
  return out;
}
