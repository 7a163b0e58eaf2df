/**
 * SYNC_MAX_HEAP_MB's default and bounds, apart from the settings table: `sync` starts its thread
 * with the limit before the CLI and its config are loaded (src/cli/sync-thread.ts).
 */
export const SYNC_HEAP_DEFAULT_MB = 512;
export const SYNC_HEAP_MIN_MB = 64;
export const SYNC_HEAP_MAX_MB = 65_536;

/**
 * The heap limit SYNC_MAX_HEAP_MB asks for; the default when unset or invalid, since the thread's
 * own config check then refuses the value, naming the variable.
 */
export function syncHeapMbFrom(env: NodeJS.ProcessEnv): number {
  const text = env.SYNC_MAX_HEAP_MB?.trim() ?? '';
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  return value >= SYNC_HEAP_MIN_MB && value <= SYNC_HEAP_MAX_MB ? value : SYNC_HEAP_DEFAULT_MB;
}
