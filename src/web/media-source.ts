/**
 * Where a page's `<img>` points for an image URL found in upstream data: the upstream URL itself
 * (`upstreamMedia`), or, with media mirrored, the mirror's own `/media/<sha256>/<name>` path
 * (`mirroredMedia`), for which the page's CSP then needs no foreign origin.
 */
export interface MediaResolver {
  /** The `src` to show, or null when the URL must not be shown as an image. */
  imageSrc(url: string): string | null;
  /**
   * The `src` of the very bytes `sha256` once behind `url` (the old side of a media_changed change),
   * when the mirror still holds them; null otherwise: the URL itself now serves other bytes.
   */
  heldImageSrc(url: string, sha256: string): string | null;
}

/** File kinds a browser shows in an `<img>`; anything else (the .mp4 emoji) is named, not loaded. */
const IMAGE_PATH = /\.(png|jpe?g|gif|webp|avif|svg)$/i;

/** Longest URL put into a page: a URL is not a place for a megabyte. */
const MAX_IMAGE_URL_BYTES = 2048;

/**
 * A host a CSP source can name: dot-separated letters, digits and hyphens (URL has already turned
 * a Unicode name into punycode). WHATWG URL lets `;`, `,`, `'` and more through in a host, and a
 * `;` in an `img-src` starts a new directive (`http://x;sandbox/y.png` sandboxed the page).
 */
const POLICY_HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/;

/** The `scheme://host[:port]` of an http(s) URL for a CSP source list, or null when it cannot be one. */
export function policyOrigin(url: string): string | null {
  if (!URL.canParse(url)) return null;
  const { protocol, hostname, port } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:') return null;
  if (!POLICY_HOST.test(hostname) || !/^\d*$/.test(port)) return null;
  return `${protocol}//${hostname}${port === '' ? '' : `:${port}`}`;
}

/**
 * Shows http(s) image URLs as they are; refuses other schemes (javascript:, data:), non-images, and
 * hosts a page's CSP cannot name (the browser would block them anyway).
 */
export const upstreamMedia: MediaResolver = {
  imageSrc(url) {
    if (Buffer.byteLength(url) > MAX_IMAGE_URL_BYTES || !URL.canParse(url)) return null;
    const parsed = new URL(url);
    if (policyOrigin(parsed.href) === null) return null;
    if (parsed.username || parsed.password) return null;
    return IMAGE_PATH.test(parsed.pathname) ? parsed.toString() : null;
  },
  heldImageSrc: () => null,
};

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Shows the mirror's own copy (`/media/<sha256>/<name>`) of an image it mirrored, else the upstream
 * URL as `upstreamMedia` would: the pages then work offline too, and their CSP needs no foreign
 * origin for what was mirrored.
 */
export function mirroredMedia(
  mirrorPath: (url: string) => string | null,
  heldPath: (url: string, sha256: string) => string | null = () => null,
): MediaResolver {
  return {
    imageSrc(url) {
      const src = upstreamMedia.imageSrc(url);
      return src === null ? null : (mirrorPath(url) ?? src);
    },
    heldImageSrc(url, sha256) {
      if (!SHA256.test(sha256) || upstreamMedia.imageSrc(url) === null) return null;
      return heldPath(url, sha256);
    },
  };
}

/** The origin an image source loads from, for the page's `img-src`; null for the mirror's own paths. */
export function imageOrigin(src: string): string | null {
  if (src.startsWith('/')) return null;
  return policyOrigin(src);
}
