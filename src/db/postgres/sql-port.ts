import type { SqlPort } from '../sql-port.js';
import { run, tuples, type Queryable } from './sql.js';

/** `?` placeholders as PostgreSQL's `$n`. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export function pgSqlPort(db: Queryable): SqlPort {
  return {
    rows: <T extends unknown[]>(sql: string, params: readonly unknown[] = []) =>
      tuples<T>(db, numbered(sql), [...params]),
    run: (sql, params = []) => run(db, numbered(sql), [...params]),
    list: (type, values) => ({ sql: `(select unnest(?::${type}[]))`, param: values }),
  };
}
