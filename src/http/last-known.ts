/**
 * A read of the store for metrics that answers its last known value while the store cannot answer
 * (PostgreSQL restarting): a scrape then still succeeds, and `coworker_mirror_database_up` says the
 * figures are not fresh. Before any success, the failure is the answer.
 */
export function keepLast<T>(read: () => Promise<T>): () => Promise<T> {
  let kept: { value: T } | null = null;
  return async () => {
    try {
      const value = await read();
      kept = { value };
      return value;
    } catch (error) {
      if (kept === null) throw error;
      return kept.value;
    }
  };
}
