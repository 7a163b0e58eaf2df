import { z } from 'zod';

/** The list path of the upstream contract, appended to the configured base URL. */
export const LIST_PATH = '/api/model/team-block-coworker/list/';

const absoluteHttpUrl = z.string().refine(
  (value) => {
    if (!URL.canParse(value)) return false;
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  },
  { message: 'expected an absolute http(s) URL' },
);

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
  count: z.number().int().nonnegative(),
  next: absoluteHttpUrl.nullable(),
  previous: absoluteHttpUrl.nullable(),
  results: z.array(z.unknown()),
});

export type PageEnvelope = z.infer<typeof pageEnvelopeSchema>;
