import type { Command } from 'commander';
import type { CliHelpers } from './deliveries-command.js';
import type { Write } from './notify-actions.js';

const stdout: Write = (line) => process.stdout.write(`${line}\n`);

/** `notify test` (a sample message to every target, as urlwatch's `--test-reporter`) and `notify enable`. */
export function registerNotifyCommand(program: Command, cli: CliHelpers, write: Write = stdout): void {
  const notify = program.command('notify').description('Chat and e-mail notifications');
  cli
    .withSettings(
      notify
        .command('enable')
        .description('Enable again a target a permanent refusal (404/410) disabled')
        .argument('<target>', 'the target id (shown by `deliveries` and the status page), or `all`'),
      ['database.path'],
    )
    .action(async (which: string, flags: Record<string, unknown>) => {
      const config = await cli.configFrom(flags);
      const [{ withExistingStoreAsync }, { runNotifyEnable }] = await Promise.all([
        import('./with-store.js'),
        import('./notify-actions.js'),
      ]);
      process.exitCode = await withExistingStoreAsync(config, (store) =>
        runNotifyEnable(store, config, which, write),
      );
    });
  cli
    .withSettings(
      notify
        .command('test')
        .description('Send a sample message to every NOTIFY_URLS target and say what each answered'),
      ['server.publicBaseUrl', 'server.internalPort', 'server.internalBaseUrl', 'log.level'],
    )
    .action(async (flags: Record<string, unknown>) => {
      const { runNotifyTest } = await import('./notify-actions.js');
      const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      process.exitCode = await runNotifyTest(await cli.configFrom(flags), timeZone, write);
    });
}
