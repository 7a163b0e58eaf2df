import cron from 'node-cron';

/** The next time `expression` fires after now; node-cron computes it without starting a task. */
export function nextCronRun(expression: string): Date | null {
  const task = cron.createTask(expression, () => undefined);
  try {
    return task.getNextRuns(1)[0] ?? null;
  } finally {
    void task.destroy();
  }
}
