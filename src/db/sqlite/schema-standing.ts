import type Database from 'better-sqlite3';
import { standingOf, type SchemaStanding } from '../migration-times.js';

/** Reads drizzle's own bookkeeping (`__drizzle_migrations`, ordered by `created_at` as its migrator does). */
export function schemaStanding(sqlite: Database.Database): SchemaStanding {
  const hasTable = sqlite
    .prepare("select 1 from sqlite_master where type = 'table' and name = '__drizzle_migrations'")
    .get();
  const last = hasTable
    ? Number(sqlite.prepare('select max(created_at) from __drizzle_migrations').pluck().get() ?? 0)
    : 0;
  return standingOf('sqlite', last);
}
