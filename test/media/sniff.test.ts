import { describe, expect, it } from 'vitest';
import { checkType, sniffKind } from '../../src/media/sniff.js';
import { mediaFileFor } from '../../src/simulated-upstream/index.js';

const bytesOf = (path: string): Buffer => mediaFileFor(path)?.bytes ?? Buffer.alloc(0);

describe('signature sniffing', () => {
  it.each([
    ['a.png', 'png'],
    ['a.jpg', 'jpeg'],
    ['a.webp', 'webp'],
    ['a.gif', 'gif'],
    ['a.mp4', 'mp4'],
    ['a.webm', 'webm'],
  ] as const)('the simulated host’s %s is %s', (path, kind) => {
    expect(sniffKind(bytesOf(path))).toBe(kind);
  });

  it.each([
    ['image/png', 'a.png', { ok: true, contentType: 'image/png' }],
    ['IMAGE/JPEG; charset=binary', 'a.jpg', { ok: true, contentType: 'image/jpeg' }],
    [undefined, 'a.webp', { ok: true, contentType: 'image/webp' }],
    ['application/octet-stream', 'a.mp4', { ok: true, contentType: 'video/mp4' }],
    ['image/png', 'a.jpg', { ok: false, reason: 'declared image/png but the bytes are jpeg' }],
    ['text/html', 'a.gif', { ok: false, reason: 'declared text/html but the bytes are gif' }],
  ] as const)('declared %s with %s bytes → %j', (declared, path, expected) => {
    expect(checkType(declared, bytesOf(path))).toEqual(expected);
  });

  it('refuses bytes of no known kind, whatever the declared type', () => {
    expect(checkType('image/png', Buffer.from('<!doctype html>'))).toEqual({
      ok: false,
      reason: 'bytes match no PNG/JPEG/WebP/GIF/MP4/WebM signature (declared image/png)',
    });
  });
});
