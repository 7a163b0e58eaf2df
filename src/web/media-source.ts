/**
 * Where a page's `<img>` points for an image URL found in upstream data: the upstream URL itself
 * (`upstreamMedia`), or, with media mirrored, the mirror's own `/media/<sha256>/<name>` path
 * (`mirroredMedia`), for which the page's CSP then needs no foreign origin.
 */
export interface MediaResolver {
  /** The `src` to show, or null when the URL must not be shown as an image. */
  imageSrc(url: string): string | null;
}

/** File kinds a browser shows in an `<img>`; anything else (the .mp4 emoji) is named, not loaded. */
const IMAGE_PATH = /\.(png|jpe?g|gif|webp|avif|svg)$/i;

/** Longest URL put into a page: a URL is not a place for a megabyte. */
const MAX_IMAGE_URL_BYTES = 2048;

/** Shows http(s) image URLs as they are; refuses other schemes (javascript:, data:) and non-images. */
export const upstreamMedia: MediaResolver = {
  imageSrc(url) {
    if (Buffer.byteLength(url) > MAX_IMAGE_URL_BYTES || !URL.canParse(url)) return null;
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    if (parsed.username || parsed.password) return null;
    return IMAGE_PATH.test(parsed.pathname) ? parsed.toString() : null;
  },
};

/**
 * Shows the mirror's own copy (`/media/<sha256>/<name>`) of an image it mirrored, else the upstream
 * URL as `upstreamMedia` would: the pages then work offline too, and their CSP needs no foreign
 * origin for what was mirrored.
 */
export function mirroredMedia(mirrorPath: (url: string) => string | null): MediaResolver {
  return {
    imageSrc(url) {
      const src = upstreamMedia.imageSrc(url);
      return src === null ? null : (mirrorPath(url) ?? src);
    },
  };
}

/** The origin an image source loads from, for the page's `img-src`; null for the mirror's own paths. */
export function imageOrigin(src: string): string | null {
  if (src.startsWith('/')) return null;
  return URL.canParse(src) ? new URL(src).origin : null;
}
