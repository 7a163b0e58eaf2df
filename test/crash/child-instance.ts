/**
 * The instance id a crash child gives its PostgreSQL connections, so the parent can find its
 * sessions (pg_stat_activity's application_name) and wait for the server to end them. A module
 * of its own: the child imports it, and nothing here may load vitest into the child.
 */
export const crashChildInstance = (pid: number): string => `crash-child/${pid}`;
