import type { z } from 'zod';
import type { SchemaKit } from './schema-kit.js';
import type { ListedSetting, SettingKey, Settings } from './setting-table.js';
import type { TextSchema } from './text-values.js';

/** The value a setting's `schema` parses its text to: a zod schema's output, or a plain parser's value. */
export type ValueOf<S> = S extends (v: SchemaKit) => infer Z
  ? Z extends z.ZodType
    ? z.output<Z>
    : never
  : S extends TextSchema<infer T>
    ? T
    : never;

/** The settings' values as their schemas parse them, nested by group. */
export type SettingValues = {
  [G in keyof Settings]: {
    [N in keyof Settings[G]]: Settings[G][N] extends { schema: infer S } ? ValueOf<S> : never;
  };
};

// Built on first use and kept: a zod schema is built once per process, whoever asks first.
const built = new Map<SettingKey, TextSchema<unknown>>();

/**
 * The schema a setting's text is parsed with: its plain one as it is, or its zod one, built from the
 * kit on first use. Without the kit (a command that loaded no zod) a setting that needs zod is a
 * mistake of the caller, which asked for a setting it said it would not parse.
 */
export function schemaOf(s: ListedSetting, kit: SchemaKit | null): TextSchema<unknown> {
  if (typeof s.schema !== 'function') return s.schema;
  // Refused without the kit even when built before, so a call that needs zod fails the same in any order.
  if (!kit) throw new Error(`${s.env} is parsed by a zod schema, but no schema kit was given`);
  const cached = built.get(s.key);
  if (cached) return cached;
  const schema = s.schema(kit);
  built.set(s.key, schema);
  return schema;
}
