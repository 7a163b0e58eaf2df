import { once } from 'node:events';
import { styleFor, type Style } from './terminal.js';

/** Where a read command writes and how: tests pass their own. */
export interface Output {
  write: (line: string) => void;
  /**
   * Writes `text` as it is, no newline added: an export's batch, already ending with its line
   * break, goes out without being copied to drop that break for `write` (one copy less per batch).
   */
  writeText?: (text: string) => void;
  /** Writes UTF-8 text as it is: an export's batch encoded by the thread that read it. */
  writeBytes?: (bytes: Uint8Array) => void;
  style: Style;
  /**
   * Resolves once the destination has taken what was written (stdout's 'drain'): a stream awaits it
   * between batches, so a slow reader holds the export back instead of its rows piling up in memory.
   */
  drained?: () => Promise<void>;
}

export function stdoutOutput(): Output {
  let full = false;
  return {
    write: (line) => {
      if (!process.stdout.write(`${line}\n`)) full = true;
    },
    writeText: (text) => {
      if (!process.stdout.write(text)) full = true;
    },
    writeBytes: (bytes) => {
      if (!process.stdout.write(bytes)) full = true;
    },
    style: styleFor(process.stdout),
    drained: async () => {
      if (!full) return;
      await once(process.stdout, 'drain');
      full = false;
    },
  };
}
