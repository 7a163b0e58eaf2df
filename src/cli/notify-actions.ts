// What `notify test`, `notify enable` and `deliveries` do: loaded when one of them runs, never for --help.
import type { Config } from '../config/load-config.js';
import { pagesBaseUrl } from '../config/listeners.js';
import { sampleMessage } from '../notify/message.js';
import { sendMessage, type SendOutcome } from '../notify/send.js';
import { EXIT } from './exit-codes.js';
import type { Store } from '../db/store.js';
import { disabledTargetLine, disabledTargetViews } from '../notify/disabled-targets.js';
import { keyedTargets } from '../notify/targets.js';

export type Write = (line: string) => void;

/** What each outcome is called in the command's answer. */
const VERDICT: Record<SendOutcome['status'], string> = {
  ok: 'delivered',
  retry: 'not delivered, would be retried',
  refused: 'refused for good (the target would be disabled)',
  failed: 'refused this message',
};

/**
 * Sends the sample message to every target of NOTIFY_URLS and says what each answered, one
 * line per target by its masked label; exit 0 only when every target took it.
 */
export async function runNotifyTest(config: Config, timeZone: string, write: Write): Promise<number> {
  const targets = config.notify.urls;
  if (targets.length === 0) {
    write('NOTIFY_URLS names no target: nothing to test');
    return EXIT.usage;
  }
  const message = sampleMessage(new Date(), { baseUrl: pagesBaseUrl(config.server), timeZone });
  const outcomes = await Promise.all(
    targets.map((target) => sendMessage(message, target, { timeoutMs: config.notify.timeoutMs })),
  );
  outcomes.forEach((outcome, i) => {
    const target = targets[i];
    if (target === undefined) return;
    const wait =
      outcome.retryAfterMs !== null ? ` (Retry-After ${Math.ceil(outcome.retryAfterMs / 1000)} s)` : '';
    write(`${target.label}: ${VERDICT[outcome.status]}, ${outcome.detail}${wait}, ${outcome.durationMs} ms`);
  });
  return outcomes.every((o) => o.status === 'ok') ? EXIT.ok : EXIT.unexpected;
}

/** The lines `deliveries` adds for notification targets a permanent refusal disabled. */
export async function disabledTargetLines(store: Store, config: Pick<Config, 'notify'>): Promise<string[]> {
  const views = disabledTargetViews(
    await store.disabledNotifyTargets(),
    config.notify.urls,
    store.endpointKeys,
  );
  return views.map(disabledTargetLine);
}

/**
 * `notify enable <target-id|all>`: re-enables disabled targets and says which, by masked label;
 * their pending messages go out at the next pass of `start` or the next `sync`.
 */
export async function runNotifyEnable(
  store: Store,
  config: Pick<Config, 'notify' | 'database'>,
  which: string,
  write: Write,
): Promise<number> {
  const enabled = await store.enableNotifyTargets(which === 'all' ? null : which);
  if (enabled.length === 0) {
    const none =
      which === 'all' ? 'no notification target is disabled' : `no disabled notification target ${which}`;
    write(`${none} in ${config.database.path}`);
    return which === 'all' ? EXIT.ok : EXIT.notFound;
  }
  const labels = new Map(keyedTargets(config.notify.urls, store.endpointKeys).map((t) => [t.id, t.label]));
  for (const id of enabled) {
    const label = labels.get(id) ?? '(no longer in NOTIFY_URLS)';
    write(
      `notification target ${id} ${label} enabled; its pending messages go out at the next sync or start`,
    );
  }
  return EXIT.ok;
}
