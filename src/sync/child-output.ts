import type { Logger } from '../logger.js';

/** How `start` logs, decided once in the parent; its sync child is told to log the same way. */
export type LogFormat = 'pretty' | 'json';

/** A line the child writes without a newline is passed on in parts of this many characters. */
const MAX_LINE_CHARS = 64 * 1024;

export interface ChildOutput {
  write(text: string): void;
  /** Passes on what is left once the child's stream ended. */
  end(): void;
}

/**
 * Where the sync child's stderr goes. The child logs in the parent's format itself (it is told
 * which); what else it may write (node's own warnings, V8's last words before an out-of-heap
 * death) is text, not a record. On a terminal that text is for a person and goes as it is; in JSON
 * each such line becomes a record of the parent's, so a log collector reads nothing but JSON.
 */
export function childOutput(
  format: LogFormat,
  destination: NodeJS.WritableStream,
  logger: Logger,
): ChildOutput {
  if (format === 'pretty') return { write: (text) => void destination.write(text), end: () => undefined };
  let pending = '';
  const line = (text: string) => {
    if (text === '') return;
    if (isJsonRecord(text)) destination.write(`${text}\n`);
    else logger.warn({ output: text }, 'the sync process wrote a line that is not a log record');
  };
  return {
    write(text) {
      pending += text;
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        line(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
      while (pending.length > MAX_LINE_CHARS) {
        line(pending.slice(0, MAX_LINE_CHARS));
        pending = pending.slice(MAX_LINE_CHARS);
      }
    },
    end() {
      line(pending);
      pending = '';
    },
  };
}

function isJsonRecord(text: string): boolean {
  if (!text.startsWith('{')) return false;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}
