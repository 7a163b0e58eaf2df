import { writeFileSync } from 'node:fs';
import type { Reporter, SerializedError, TestModule } from 'vitest/node';

// Vitest fails a run on an error thrown outside any test (an uncaught exception or unhandled
// rejection in a worker), yet its JSON report counts no failure for it, and on a long run its
// account scrolls far above the summary. This reporter writes those errors to a file CI reads, so
// its last lines say what failed (.ci/run prints them and counts them as failures).

/** Where the errors go: the path in VITEST_UNHANDLED_FILE, else nothing is written. */
const FILE = process.env.VITEST_UNHANDLED_FILE;

export interface UnhandledRecord {
  name: string;
  message: string;
  /** The test file that was running, as vitest saw it (not necessarily the thrower). */
  file: string | null;
  /** The test that was running, when one was. */
  test: string | null;
  stack: string;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function record(error: SerializedError): UnhandledRecord {
  return {
    name: error.name ?? 'Error',
    message: error.message,
    file: text(error.VITEST_TEST_PATH),
    test: text(error.VITEST_TEST_NAME),
    stack: error.stack ?? '',
  };
}

export default class UnhandledErrorsReporter implements Reporter {
  onTestRunEnd(_modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<SerializedError>): void {
    if (FILE === undefined || FILE === '') return;
    writeFileSync(FILE, `${JSON.stringify(errors.map(record), null, 2)}\n`);
  }
}
