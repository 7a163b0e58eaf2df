/** The media kinds the mirror recognises by their first bytes, with the Content-Types each may carry. */
const mediaKinds = {
  png: ['image/png'],
  jpeg: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  gif: ['image/gif'],
  webp: ['image/webp'],
  mp4: ['video/mp4', 'video/quicktime', 'audio/mp4', 'application/mp4'],
  webm: ['video/webm', 'audio/webm'],
} as const;

export type MediaKind = keyof typeof mediaKinds;

/** Bytes needed to tell every kind apart. */
export const SNIFF_BYTES = 16;

const startsWith = (head: Uint8Array, bytes: readonly number[], at = 0): boolean =>
  head.length >= at + bytes.length && bytes.every((b, i) => head[at + i] === b);

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/** The kind announced by a file's signature, or null when it is none of the kinds above. */
export function sniffKind(head: Uint8Array): MediaKind | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) return 'gif';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'webp';
  // ISO BMFF: a box size, then `ftyp` (MP4, M4V, QuickTime all start so).
  if (startsWith(head, ascii('ftyp'), 4)) return 'mp4';
  // EBML header: Matroska and WebM.
  if (startsWith(head, [0x1a, 0x45, 0xdf, 0xa3])) return 'webm';
  return null;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
function essence(contentType: string | undefined): string | null {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  return type ? type : null;
}

/**
 * Whether the bytes are what the media host said they were. A host that names no type (or a
 * generic one) is trusted with any recognised signature; the sniffed type is then served.
 */
export function checkType(
  declared: string | undefined,
  head: Uint8Array,
): { ok: true; contentType: string } | { ok: false; reason: string } {
  const kind = sniffKind(head);
  const type = essence(declared);
  if (kind === null) {
    return {
      ok: false,
      reason: `bytes match no PNG/JPEG/WebP/GIF/MP4/WebM signature (declared ${type ?? 'none'})`,
    };
  }
  const allowed: readonly string[] = mediaKinds[kind];
  if (type === null || type === 'application/octet-stream' || type === 'binary/octet-stream') {
    return { ok: true, contentType: allowed[0] ?? 'application/octet-stream' };
  }
  if (allowed.includes(type)) return { ok: true, contentType: type };
  return { ok: false, reason: `declared ${type} but the bytes are ${kind}` };
}
