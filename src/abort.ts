/**
 * Signals joined by hand, for calls made many times under one long-lived signal (a run's, a
 * server's). Not AbortSignal.any: on Node 20 every signal it makes stays reachable from the signals
 * it joined until those are collected, so a run's requests piled up under its signal (a large
 * first sync's memory grew with its page count), and each call is slow for a per-request helper.
 */

/**
 * Aborts `controller` when any of `signals` aborts (at once if one already has, with its reason);
 * answers what stops following them, to call when the work under the controller ends.
 */
export function abortWith(
  controller: AbortController,
  signals: readonly (AbortSignal | undefined)[],
): () => void {
  const followed: [AbortSignal, () => void][] = [];
  for (const signal of signals) {
    if (signal === undefined) continue;
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    followed.push([signal, onAbort]);
  }
  return () => {
    for (const [signal, onAbort] of followed) signal.removeEventListener('abort', onAbort);
  };
}

/**
 * A signal that aborts when `a` or `b` does, and what stops following them: the one present as it
 * is, or a new one following both.
 */
export function eitherSignal(a: AbortSignal, b: AbortSignal | undefined): [AbortSignal, () => void];
export function eitherSignal(
  a: AbortSignal | undefined,
  b: AbortSignal | undefined,
): [AbortSignal | undefined, () => void];
export function eitherSignal(
  a: AbortSignal | undefined,
  b: AbortSignal | undefined,
): [AbortSignal | undefined, () => void] {
  if (a === undefined || b === undefined) return [a ?? b, () => undefined];
  const either = new AbortController();
  return [either.signal, abortWith(either, [a, b])];
}
