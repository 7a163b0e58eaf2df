import { z } from 'zod';
import { changeKinds } from '../db/schema.js';
import { instantOfLocal } from './time-zone.js';

/** Query parameters of the pages, parsed once; a bad one answers 400 naming it. */

/**
 * A moment in the pages' zone: a date (its first or last millisecond there, by `edge`), a wall time
 * as a `datetime-local` input sends it ("2026-03-03T09:10"), or an ISO 8601 time with its offset.
 */
const when = (edge: 'start' | 'end', timeZone: string) =>
  z
    .string()
    .max(64)
    .transform((value, ctx) => {
      const text = value.trim();
      if (text === '') return undefined;
      const local = instantOfLocal(text, timeZone, edge);
      if (local !== null) return local.toISOString();
      const time = Date.parse(text);
      if (Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/i.test(text)) {
        ctx.addIssue({
          code: 'custom',
          message: 'expected a date like 2026-03-03, a time like 2026-03-03T09:10, or an ISO 8601 time',
        });
        return z.NEVER;
      }
      return new Date(time).toISOString();
    });

const blankable = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

const id = z
  .string()
  .regex(/^\d{1,15}$/, 'expected a whole number')
  .transform(Number)
  .pipe(z.number().int().min(1, 'expected at least 1'));

/** The timeline's filters; `from` and `to` are days (or times) of the pages' zone. */
export const changesPageQuery = (timeZone: string) =>
  z.object({
    kind: blankable(z.enum(changeKinds)),
    field: blankable(z.string().max(200)),
    name: blankable(z.string().max(200)),
    uuid: blankable(z.string().regex(/^[a-z0-9]{32}$/, 'expected 32 lowercase letters or digits')),
    from: blankable(when('start', timeZone)),
    to: blankable(when('end', timeZone)),
    before: blankable(id),
  });
export type ChangesPageQuery = z.output<ReturnType<typeof changesPageQuery>>;

export const coworkersPageQuery = z.object({
  q: blankable(z.string().max(200)),
  status: blankable(z.enum(['present', 'departed', 'all'])),
  page: blankable(id),
});

/** The team as it was: `as_of` a day or a time of the pages' zone. */
export const teamPageQuery = (timeZone: string) =>
  z.object({
    as_of: blankable(when('end', timeZone)),
    run: blankable(id),
    page: blankable(id),
  });

export const runsPageQuery = z.object({ page: blankable(id) });

export const uuidPathParam = z.object({
  uuid: z.string().regex(/^[a-z0-9]{32}$/, 'expected 32 lowercase letters or digits'),
});
export const runPathParam = z.object({ id });

export type ParamResult<T> = { ok: true; value: T } | { ok: false; parameter: string; problem: string };

/** Parses query or path values; repeated parameters are refused rather than one picked silently. */
export function parsePageParams<S extends z.ZodType>(schema: S, raw: unknown): ParamResult<z.output<S>> {
  const values = (raw ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(values)) {
    if (Array.isArray(value)) return { ok: false, parameter: name, problem: 'given more than once' };
  }
  const parsed = schema.safeParse(values);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, parameter: String(issue?.path[0] ?? ''), problem: issue?.message ?? 'invalid' };
}
