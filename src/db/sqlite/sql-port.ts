import type Database from 'better-sqlite3';
import type { SqlPort } from '../sql-port.js';

export const settle = <T>(work: () => T): Promise<T> => new Promise<T>((resolve) => resolve(work()));

/** The port over one connection's statements, as `prepare` makes (or keeps) them. */
export function sqliteSqlPort(prepare: (sql: string) => Database.Statement): SqlPort {
  return {
    dialect: 'sqlite',
    rows: <T extends unknown[]>(sql: string, params: readonly unknown[] = []) =>
      settle(
        () =>
          prepare(sql)
            .raw(true)
            .all(...params) as T[],
      ),
    values: <T>(sql: string, params: readonly unknown[] = []) =>
      settle(
        () =>
          prepare(sql)
            .pluck(true)
            .all(...params) as T[],
      ),
    run: (sql, params = []) => settle(() => prepare(sql).run(...params).changes),
    list: (_type, values) => ({ sql: '(select value from json_each(?))', param: JSON.stringify(values) }),
    oneOf: (column, _type, values) => ({
      sql: `${column} in (select value from json_each(?))`,
      param: JSON.stringify(values),
    }),
  };
}

/** `work` in one transaction of `sqlite` (`write`: taking the write lock at once). */
export async function withinTransaction<T>(
  sqlite: Database.Database,
  work: () => Promise<T>,
  write: boolean,
): Promise<T> {
  sqlite.exec(write ? 'begin immediate' : 'begin');
  try {
    const result = await work();
    sqlite.exec('commit');
    return result;
  } catch (error) {
    if (sqlite.inTransaction) sqlite.exec('rollback');
    throw error;
  }
}
