import { z } from 'zod';
import { isLosslessNumber } from '../json/lossless.js';

// Its own module, so what needs only the path (the config, a read command) loads no zod.
export { LIST_PATH } from './list-path.js';

// The URL parser drops leading C0 controls and spaces and reads the scheme case-insensitively; the
// scheme test mirrors that, so one parse per URL suffices (a crawl checks hundreds of thousands).
// eslint-disable-next-line no-control-regex -- C0 controls are exactly what the URL parser strips
const HTTP_SCHEME = /^[\u0000-\u0020]*https?:/i;

const absoluteHttpUrl = z
  .string()
  .refine((value) => HTTP_SCHEME.test(value) && URL.canParse(value), {
    message: 'expected an absolute http(s) URL',
  })
  // The parser would percent-encode it, but a media URL is stored as sent, and PostgreSQL's text
  // cannot hold U+0000: refused on every store alike.
  .refine((value) => !value.includes('\u0000'), { message: 'expected a URL without U+0000 (NUL)' });

/**
 * One coworker entry as the contract states it. `looseObject` keeps unknown fields: they are stored
 * and served as received, and reported once per run as schema drift.
 */
export const coworkerSchema = z.looseObject({
  uuid: z.string().regex(/^[a-z0-9]{32}$/, 'expected 32 lowercase letters or digits'),
  name: z.string(),
  post: z.string(),
  emoji_file: absoluteHttpUrl.nullable(),
  emoji_file_webm: absoluteHttpUrl.nullable(),
  show_image: z.boolean(),
  images: z.array(absoluteHttpUrl),
});

export type Coworker = z.infer<typeof coworkerSchema>;

export const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(coworkerSchema.shape));

/** The page envelope; `results` is checked entry by entry so errors can name the entry index. */
export const pageEnvelopeSchema = z.looseObject({
  // A count written `8.0` or `1e400` arrives as its text; it is checked as the number it names.
  count: z.preprocess(
    (value) => (isLosslessNumber(value) ? Number(value.value) : value),
    z.number().int().nonnegative(),
  ),
  next: absoluteHttpUrl.nullable(),
  previous: absoluteHttpUrl.nullable(),
  results: z.array(z.unknown()),
});
