import type { Config } from '../config/load-config.js';
import { notificationRowsOf } from '../db/open-store.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { OutboxChannel } from '../outbox/channel.js';

/**
 * A plain `sync`, success or failure: what the outbox holds goes out before the process exits, in
 * ONE pass of one outbox worker over the channels configured (WEBHOOK_URLS, NOTIFY_URLS; neither
 * stack loads without a target), both channels' rows in flight at once. The pass claims nothing
 * past the earlier of the channels' budgets (WEBHOOK_TIMEOUT, NOTIFY_SEND_TIMEOUT) and stops at
 * NOTIFY_SEND_TIMEOUT (a notification attempt's deadline is cut to it; a webhook attempt still in
 * flight then is handed back unlogged); what is not sent stays pending for `start` or the next
 * sync. The exit code stays the run's: what did not go out is said on stderr and in the log.
 */
export async function deliverAfterSync(store: Store, config: Config, logger: Logger): Promise<void> {
  const rows = notificationRowsOf(store);
  const webhooks = config.webhooks.urls.length > 0;
  const notifying = (config.notify.urls ?? []).length > 0 && rows !== null;
  if (!webhooks && !notifying) return;
  try {
    const [{ OutboxWorker }, hooks, notify] = await Promise.all([
      import('../outbox/worker.js'),
      webhooks ? import('../webhooks/channel.js') : null,
      notifying ? import('../notify/after-sync.js') : null,
    ]);
    const webhookChannel = hooks?.webhookChannel({ store, settings: config.webhooks }) ?? null;
    const deadline = Date.now() + config.notify.sendTimeoutMs;
    const notifications =
      notify && rows
        ? notify.afterSyncNotifications({
            rows,
            config,
            keys: store.endpointKeys,
            logger: logger.child({ module: 'notify' }),
            deadline,
          })
        : null;
    const channels: OutboxChannel[] = [];
    if (webhookChannel) channels.push({ ...webhookChannel, log: logger.child({ module: 'webhooks' }) });
    if (notifications) channels.push(notifications.channel);
    const worker = new OutboxWorker({ channels, logger: logger.child({ module: 'outbox' }) });
    const budgetMs = Math.min(
      webhookChannel ? config.webhooks.timeoutMs : Number.POSITIVE_INFINITY,
      notifications ? config.notify.sendTimeoutMs : Number.POSITIVE_INFINITY,
    );
    const stopAtDeadline = notifications ? setTimeout(() => void worker.stop(), deadline - Date.now()) : null;
    try {
      await worker.drain(budgetMs);
    } finally {
      if (stopAtDeadline) clearTimeout(stopAtDeadline);
      await worker.stop();
    }
    const webhooksLeft = webhookChannel ? await webhookChannel.pending() : 0;
    if (webhooksLeft > 0) {
      logger.info({ pending: webhooksLeft }, 'webhook deliveries left pending for the next process');
    }
    for (const line of (await notifications?.lines()) ?? []) process.stderr.write(`${line}\n`);
  } catch (error) {
    logger.error({ err: error }, 'delivery after the sync failed; what was not sent stays in the outbox');
    if (notifying)
      process.stderr.write('coworker-mirror: notifications not delivered; they stay in the outbox\n');
  }
}
