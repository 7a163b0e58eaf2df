import type { RunStage } from './run-stage.js';

/**
 * The stage with every failure of its own calls mapped as the store's operations map theirs (a lost
 * connection is a DB_ERROR saying what to check): a run that loses the database mid-crawl or
 * mid-diff fails with the code a lost database has everywhere else.
 */
export function guardedStage(stage: RunStage, mapError: (error: unknown) => unknown): RunStage {
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      call(...args).catch((error: unknown) => {
        throw mapError(error);
      });
  return {
    append: guard((entries) => stage.append(entries)),
    reset: guard(() => stage.reset()),
    entryCount: guard(() => stage.entryCount()),
    holdCurrent: guard((hashOf) => stage.holdCurrent(hashOf)),
    chunk: guard((after, rows) => stage.chunk(after, rows)),
    entryTexts: guard((positions) => stage.entryTexts(positions)),
    record: guard((outcome) => stage.record(outcome)),
    recordFirstListing: guard(() => stage.recordFirstListing()),
    repeatedUuids: guard((limit) => stage.repeatedUuids(limit)),
    exactCopies: guard(() => stage.exactCopies()),
    pageTexts: guard((page) => stage.pageTexts(page)),
    texts: () => guardedTexts(stage.texts(), mapError),
    commit: guard((commit) => stage.commit(commit)),
    close: guard(() => stage.close()),
  };
}

async function* guardedTexts(
  texts: AsyncIterable<string>,
  mapError: (error: unknown) => unknown,
): AsyncIterable<string> {
  try {
    yield* texts;
  } catch (error) {
    throw mapError(error);
  }
}
