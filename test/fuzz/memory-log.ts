import { Writable } from 'node:stream';

export interface LogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

/** A pino destination that keeps every line in memory, to assert on what was logged. */
export class MemoryLog extends Writable {
  readonly #lines: string[] = [];
  #partial = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    const text = this.#partial + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const lines = text.split('\n');
    this.#partial = lines.pop() ?? '';
    this.#lines.push(...lines.filter((l) => l !== ''));
    callback();
  }

  lines(): LogLine[] {
    return this.#lines.map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        // Not pino's JSON: report it as an error-level line so it cannot go unnoticed.
        return { level: 60, msg: `unparsable log line: ${line.slice(0, 200)}` };
      }
    });
  }

  /** Lines at pino's error level (50) or above. */
  errors(): LogLine[] {
    return this.lines().filter((l) => l.level >= 50);
  }
}
