/** The entry fields that hold media URLs, per the upstream contract. */
export const MEDIA_FIELDS = ['emoji_file', 'emoji_file_webm', 'images'] as const;
export type MediaField = (typeof MEDIA_FIELDS)[number];

/** One media URL named by one field of one entry. */
export interface MediaRef {
  field: MediaField;
  url: string;
}

/** Every media URL an entry names, in field order (`images` in array order). */
export function mediaRefs(entry: unknown): MediaRef[] {
  if (typeof entry !== 'object' || entry === null) return [];
  const record = entry as Record<string, unknown>;
  const refs: MediaRef[] = [];
  for (const field of MEDIA_FIELDS) {
    const value = record[field];
    const values = Array.isArray(value) ? (value as unknown[]) : [value];
    for (const url of values) if (typeof url === 'string' && url !== '') refs.push({ field, url });
  }
  return refs;
}

/**
 * Whether a payload URL may be fetched: its origin is listed and it carries no credentials. Only
 * configuration widens the list; nothing in the payload can.
 */
export function isAllowedMediaUrl(url: string, origins: ReadonlySet<string>): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return (
    /^https?:$/.test(parsed.protocol) &&
    parsed.username === '' &&
    parsed.password === '' &&
    origins.has(parsed.origin)
  );
}

// Defined on the ground floor: the run's transaction names the mirror's media paths too (thumbnails).
export { mediaFileName as fileNameOf, mirrorMediaPath } from '../db/media-queries.js';
