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

/** How far back a tick is looked for: a schedule of 29 February fires once in eight years at worst. */
const LOOKBACK_DAYS = 8 * 366;

/**
 * The last time `expression` fired at or before `at` (to the second, in the process's time zone, as
 * node-cron schedules it), or null when it did not within eight years. node-cron only looks forward:
 * this walks back day by day, asking node-cron's own `match` whether a day has a tick at all, then
 * takes that day's latest hour, minute and second of the expression not after `at`.
 */
export function previousCronRun(expression: string, at: Date): Date | null {
  const fields = cron.parse(expression);
  const task = cron.createTask(expression, () => undefined);
  const times: TimeLists = {
    hours: [...fields.hour].sort(descending),
    minutes: [...fields.minute].sort(descending),
    seconds: [...fields.second].sort(descending),
  };
  const limit = new Date(Math.floor(at.getTime() / 1000) * 1000);
  try {
    for (let back = 0; back <= LOOKBACK_DAYS; back++) {
      const day = new Date(limit.getFullYear(), limit.getMonth(), limit.getDate() - back);
      if (!dayHasTick(day, times, (date) => task.match(date))) continue;
      const found = latestOnDay(day, times, limit);
      if (found) return found;
    }
    return null;
  } finally {
    void task.destroy();
  }
}

interface TimeLists {
  hours: number[];
  minutes: number[];
  seconds: number[];
}

const descending = (a: number, b: number): number => b - a;

/** A local time of `day`, or null where the clock skips it (a daylight-saving gap). */
function localTime(day: Date, hour: number, minute: number, second: number): Date | null {
  const date = new Date(day.getFullYear(), day.getMonth(), day.getDate(), hour, minute, second);
  return date.getHours() === hour && date.getMinutes() === minute ? date : null;
}

/**
 * Whether the expression fires on `day`: its day fields (day of month, month, day of week, and any
 * `L`) are node-cron's to judge, so it is asked about one time of the day the time fields allow.
 */
function dayHasTick(day: Date, times: TimeLists, match: (date: Date) => boolean): boolean {
  const minute = times.minutes.at(-1) ?? 0;
  const second = times.seconds.at(-1) ?? 0;
  for (const hour of [...times.hours].reverse()) {
    const probe = localTime(day, hour, minute, second);
    if (probe) return match(probe);
  }
  return false;
}

/** The latest time of `day` the time fields allow, not after `limit`; null when every one is later. */
function latestOnDay(day: Date, times: TimeLists, limit: Date): Date | null {
  for (const hour of times.hours) {
    if (new Date(day.getFullYear(), day.getMonth(), day.getDate(), hour) > limit) continue;
    for (const minute of times.minutes) {
      if (new Date(day.getFullYear(), day.getMonth(), day.getDate(), hour, minute) > limit) continue;
      for (const second of times.seconds) {
        const time = localTime(day, hour, minute, second);
        if (time && time <= limit) return time;
      }
    }
  }
  return null;
}
