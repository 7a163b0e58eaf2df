import type { RunStage } from './run-commit.js';

/**
 * The stage with every failure of its own calls mapped as the store's operations map theirs (a lost
 * connection is a DB_ERROR saying what to check): a run that loses the database mid-crawl or
 * mid-diff fails with the code a lost database has everywhere else.
 */
export function guardedStage(stage: RunStage, mapError: (error: unknown) => unknown): RunStage {
  const fail = (error: unknown): never => {
    throw mapError(error);
  };
  return {
    append: (entries) => stage.append(entries).catch(fail),
    reset: () => stage.reset().catch(fail),
    entryCount: () => stage.entryCount().catch(fail),
    holdCurrent: (hashOf) => stage.holdCurrent(hashOf).catch(fail),
    chunk: (after, rows) => stage.chunk(after, rows).catch(fail),
    entryTexts: (positions) => stage.entryTexts(positions).catch(fail),
    record: (outcome) => stage.record(outcome).catch(fail),
    recordFirstListing: () => stage.recordFirstListing().catch(fail),
    repeatedUuids: (limit) => stage.repeatedUuids(limit).catch(fail),
    exactCopies: () => stage.exactCopies().catch(fail),
    pageTexts: (page) => stage.pageTexts(page).catch(fail),
    async *texts() {
      try {
        yield* stage.texts();
      } catch (error) {
        fail(error);
      }
    },
    commit: (commit) => stage.commit(commit).catch(fail),
    close: () => stage.close().catch(fail),
  };
}
