/**
 * SQL for `body ->> path`, or null when SQLite cannot read `body` as JSON (nested past its 1,000
 * levels): one such row, stored before entry depth was bounded or written by hand, must never fail
 * a whole query, and with it a page or the server's start.
 */
export function jsonField(body: string, path: `$.${string}`): string {
  return `(case when json_valid(${body}) then ${body} ->> '${path}' end)`;
}
