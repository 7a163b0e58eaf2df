import { withinDeadline } from '../time/deadline.js';

/**
 * A read of the store for metrics: its value when the store answers within `deadlineMs`, else the
 * last value it answered (PostgreSQL restarting, a lock held on its tables), else undefined (never
 * answered yet: null). A scrape then always succeeds, and `coworker_mirror_database_up` says whether the
 * figures are fresh. A read still in flight is joined, not repeated: scrapes of a database that
 * does not answer never pile reads up on it.
 */
export function keepLast<T>(read: () => Promise<T>, deadlineMs: number): ScrapeRead<T> {
  let kept: Known<T> | null = null;
  let inFlight: Promise<T> | null = null;
  const start = (): Promise<T> => {
    const started = read().then((value) => {
      kept = { value };
      return value;
    });
    const settled = () => {
      if (inFlight === started) inFlight = null;
    };
    void started.then(settled, settled);
    return (inFlight = started);
  };
  return async () => {
    try {
      const answered = await withinDeadline(inFlight ?? start(), deadlineMs);
      if (answered.settled) return { value: answered.value };
    } catch {
      // The store refused: the last known value stands.
    }
    return kept;
  };
}

/** A value the store answered, at this scrape or an earlier one. */
export interface Known<T> {
  value: T;
}

/** A figure as a scrape reads it: within the deadline, else the last known, else null (never read). */
export type ScrapeRead<T> = () => Promise<Known<T> | null>;
