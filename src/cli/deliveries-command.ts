import type { Command } from 'commander';
import { Option } from 'commander';
import type { Config } from '../config/load-config.js';
import type { SettingKey } from '../config/setting-table.js';
import { deliveryStatuses, type DeliveryStatus } from '../db/enums.js';
import { ConfigError } from '../errors.js';
import { EXIT } from './exit-codes.js';
import type { AttemptView } from '../webhooks/delivery-queries.js';
import { localTime, paint, styleFor, table, visible, type Style } from './terminal.js';

/** The store and webhook modules of these commands, loaded when one of them runs (not for --help). */
async function deliveryParts() {
  const [queries, store, output, withStore, notify] = await Promise.all([
    import('../webhooks/delivery-queries.js'),
    import('../webhooks/delivery-store.js'),
    import('./human-output.js'),
    import('./with-store.js'),
    import('./notify-actions.js'),
  ]);
  return {
    ...queries,
    ...store,
    renderDeliveries: output.renderDeliveries,
    withExistingStoreAsync: withStore.withExistingStoreAsync,
    disabledTargetLines: notify.disabledTargetLines,
  };
}

type Write = (line: string) => void;
const stdout: Write = (line) => process.stdout.write(`${line}\n`);

/** What `cli.ts` lends its subcommands: its flag helpers, so every command reads settings alike. */
export interface CliHelpers {
  withSettings: (command: Command, keys: readonly SettingKey[]) => Command;
  configFrom: (options: Record<string, unknown>) => Promise<Config>;
}

/** One delivery's attempts, oldest first, in local time (TZ) under a header row. */
function attemptLines(attempts: readonly AttemptView[], style: Style): string[] {
  const header = ['ATTEMPT', 'AT', 'ANSWER', 'TOOK', 'ERROR', 'RESPONSE'].map((h) => paint(style, 'bold', h));
  const rows = attempts.map((a, i) => [
    String(i + 1),
    localTime(a.at),
    String(a.http_status ?? a.error?.code ?? '-'),
    `${a.duration_ms} ms`,
    visible(a.error?.message ?? ''),
    visible(JSON.stringify(a.response_excerpt ?? '')),
  ]);
  return table([header, ...rows], ['right', 'left', 'left', 'right']);
}

function positiveId(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ConfigError([
      { name, problem: `expected a whole number of at least 1 (got ${JSON.stringify(value)})` },
    ]);
  }
  return n;
}

/** `deliveries` (list, newest first), `deliveries show|redeliver <id>`, `deliveries enable <endpoint>`. */
export function registerDeliveriesCommand(program: Command, cli: CliHelpers, write: Write = stdout): void {
  const deliveries = program
    .command('deliveries')
    .description('Webhook deliveries: list them, show one with its attempts, send one again');
  registerList(deliveries, cli, write);
  registerShow(deliveries, cli, write);
  registerRedeliver(deliveries, cli, write);
  registerEnable(deliveries, cli, write);
}

type ListFlags = Record<string, unknown> & {
  status?: DeliveryStatus;
  endpoint?: string;
  limit?: string;
  json?: boolean;
};

function registerList(deliveries: Command, cli: CliHelpers, write: Write): void {
  cli
    .withSettings(
      deliveries
        .command('list', { isDefault: true })
        .description('Deliveries, newest first')
        .addOption(new Option('--status <status>', 'only this status').choices([...deliveryStatuses]))
        .option('--endpoint <id>', 'only deliveries to this endpoint id')
        .option('--limit <n>', 'at most this many', '50')
        .option('--json', 'JSON Lines output'),
      ['database.path'],
    )
    .action(async (flags: ListFlags) => {
      const config = await cli.configFrom(flags);
      const { withExistingStoreAsync, listDeliveries, renderDeliveries, disabledTargetLines } =
        await deliveryParts();
      process.exitCode = await withExistingStoreAsync(config, async (store) => {
        const rows = await listDeliveries(
          store,
          {
            status: flags.status,
            endpoint: flags.endpoint === undefined ? undefined : positiveId('--endpoint', flags.endpoint),
            limit: positiveId('--limit', flags.limit ?? '50'),
          },
          config.webhooks.urls,
        );
        if (flags.json === true) for (const d of rows) write(JSON.stringify(d));
        else for (const line of renderDeliveries(rows, styleFor(process.stdout))) write(line);
        // Notification targets are not endpoints of WEBHOOK_URLS, but a disabled one needs a person too.
        if (flags.json !== true) for (const line of await disabledTargetLines(store, config)) write(line);
        return EXIT.ok;
      });
    });
}

function registerShow(deliveries: Command, cli: CliHelpers, write: Write): void {
  cli
    .withSettings(
      deliveries
        .command('show')
        .description('One delivery with every attempt')
        .argument('<id>', 'delivery id')
        .option('--json', 'JSON output'),
      ['database.path'],
    )
    .action(async (id: string, flags: Record<string, unknown> & { json?: boolean }) => {
      const config = await cli.configFrom(flags);
      const { withExistingStoreAsync, getDelivery, renderDeliveries } = await deliveryParts();
      process.exitCode = await withExistingStoreAsync(config, async (store) => {
        const delivery = await getDelivery(store, positiveId('<id>', id), config.webhooks.urls);
        if (!delivery) {
          process.stderr.write(`no delivery ${id} in ${config.database.path}\n`);
          return EXIT.notFound;
        }
        if (flags.json === true) {
          write(JSON.stringify(delivery));
          return EXIT.ok;
        }
        const style = styleFor(process.stdout);
        for (const line of renderDeliveries([delivery], style)) write(line);
        write('');
        for (const line of attemptLines(delivery.attempt_log, style)) write(line);
        return EXIT.ok;
      });
    });
}

function registerRedeliver(deliveries: Command, cli: CliHelpers, write: Write): void {
  cli
    .withSettings(
      deliveries
        .command('redeliver')
        .description('Send a delivery again (same webhook-id), re-enabling its endpoint')
        .argument('<id>', 'delivery id'),
      ['database.path'],
    )
    .action(async (id: string, flags: Record<string, unknown>) => {
      const config = await cli.configFrom(flags);
      const { withExistingStoreAsync, redeliver } = await deliveryParts();
      process.exitCode = await withExistingStoreAsync(config, async (store) => {
        if (!(await redeliver(store, positiveId('<id>', id)))) {
          process.stderr.write(`no delivery ${id} in ${config.database.path}\n`);
          return EXIT.notFound;
        }
        write(`delivery ${id} queued again; the running \`start\` (or the next \`sync\`) sends it`);
        return EXIT.ok;
      });
    });
}

function registerEnable(deliveries: Command, cli: CliHelpers, write: Write): void {
  cli
    .withSettings(
      deliveries
        .command('enable')
        .description('Re-enable an endpoint disabled by a 410 Gone')
        .argument('<endpoint>', 'endpoint id (shown by `deliveries`)'),
      ['database.path'],
    )
    .action(async (endpoint: string, flags: Record<string, unknown>) => {
      const config = await cli.configFrom(flags);
      const { withExistingStoreAsync, enableEndpoint } = await deliveryParts();
      process.exitCode = await withExistingStoreAsync(config, async (store) => {
        if (!(await enableEndpoint(store, positiveId('<endpoint>', endpoint)))) {
          process.stderr.write(`no endpoint ${endpoint} in ${config.database.path}\n`);
          return EXIT.notFound;
        }
        write(`endpoint ${endpoint} enabled; its pending deliveries resume in order`);
        return EXIT.ok;
      });
    });
}
