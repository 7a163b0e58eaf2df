/** What a piece of work came to within its deadline: its value, or nothing yet. */
export type WithinDeadline<T> = { settled: true; value: T } | { settled: false };

/**
 * `work`'s value when it settles within `ms`, else `{ settled: false }` at `ms` (the work goes on,
 * unwatched: whoever started it bounds it too). A rejection within `ms` is passed on.
 */
export async function withinDeadline<T>(work: Promise<T>, ms: number): Promise<WithinDeadline<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<WithinDeadline<T>>((resolve) => {
    timer = setTimeout(() => resolve({ settled: false }), ms);
  });
  try {
    return await Promise.race([work.then((value): WithinDeadline<T> => ({ settled: true, value })), late]);
  } finally {
    clearTimeout(timer);
  }
}
