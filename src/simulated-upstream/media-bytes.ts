import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import { JPEG_BASE64, MP4_BASE64, WEBM_BASE64, WEBP_BASE64 } from './media-fixtures.js';

const JPEG = Buffer.from(JPEG_BASE64, 'base64');
const WEBP = Buffer.from(WEBP_BASE64, 'base64');
const MP4 = Buffer.from(MP4_BASE64, 'base64');
const WEBM = Buffer.from(WEBM_BASE64, 'base64');
// The smallest GIF: one transparent pixel.
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

export interface MediaFile {
  bytes: Buffer;
  contentType: string;
}

/**
 * Real bytes for a media path, by its extension, different per path and per `revision` where the
 * format allows: a PNG of its own colour, a JPEG with a trailer after its end marker, an MP4 with a
 * trailing `free` box. WebP, WebM and GIF are one file each (the same bytes at many URLs, which
 * the mirror stores once). Null for any other extension.
 */
export function mediaFileFor(path: string, revision = 0): MediaFile | null {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  const tag = Buffer.from(`${path}#${revision}`);
  switch (ext) {
    case 'png':
      return { bytes: solidPng(createHash('sha1').update(tag).digest()), contentType: 'image/png' };
    case 'jpg':
    case 'jpeg':
      return { bytes: Buffer.concat([JPEG, tag]), contentType: 'image/jpeg' };
    case 'mp4':
      return { bytes: Buffer.concat([MP4, box('free', tag)]), contentType: 'video/mp4' };
    case 'webp':
      return { bytes: WEBP, contentType: 'image/webp' };
    case 'webm':
      return { bytes: WEBM, contentType: 'video/webm' };
    case 'gif':
      return { bytes: GIF, contentType: 'image/gif' };
    default:
      return null;
  }
}

/** An MP4 of about `bytes` bytes (the fixture padded with a `free` box), for serving benchmarks. */
export function paddedMp4(bytes: number): Buffer {
  return Buffer.concat([MP4, box('free', Buffer.alloc(Math.max(0, bytes - MP4.length - 8)))]);
}

function box(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(payload.length + 8, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, payload]);
}

/** A 16×16 PNG of one colour (the first three bytes of `seed`). */
function solidPng(seed: Buffer): Buffer {
  const size = 16;
  const row = Buffer.alloc(1 + size * 3);
  for (let x = 0; x < size; x++) seed.copy(row, 1 + x * 3, 0, 3);
  const raw = Buffer.concat(Array.from({ length: size }, () => row));
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
