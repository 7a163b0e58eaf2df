// Django builds FileField URLs as urljoin(MEDIA_URL, filepath_to_uri(name)), and filepath_to_uri is
// quote(name, safe="/~!*()'"): UTF-8 bytes percent-encoded in upper case, apostrophes left raw.

// encodeURIComponent leaves exactly Python's always-safe set plus !*'() unescaped, so only the
// slash differs from filepath_to_uri.
export function filepathToUri(path: string): string {
  return encodeURIComponent(path.replaceAll('\\', '/')).replaceAll('%2F', '/');
}

/** An absolute media URL for a stored file name, e.g. `team/emoji/Seán O'Brien.png`. */
export function mediaUrl(mediaBaseUrl: string, name: string): string {
  const base = mediaBaseUrl.endsWith('/') ? mediaBaseUrl : `${mediaBaseUrl}/`;
  return base + filepathToUri(name);
}

/** Django's slugify with allow_unicode=False: accents folded, other non-ASCII dropped. */
export function slugify(value: string): string {
  let slug = slugs.get(value);
  if (slug === undefined) {
    slug = computeSlug(value);
    // Names come from small pools; the cache keeps 100,000-row listings cheap to generate.
    if (slugs.size < 10_000) slugs.set(value, slug);
  }
  return slug;
}

const slugs = new Map<string, string>();

function computeSlug(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/[^ -~]/g, '')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
}
