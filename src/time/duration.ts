/** `90s`, `10m`, `7d`, `1.5h` or plain milliseconds → milliseconds; null when it is none of those. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'] ?? 1;
  return Math.round(Number(match[1]) * unit);
}

/** A deadline as a message says it: `500 ms`, `2 s`, `1.5 s`, `90 s`, `10 min`. */
export function describeDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))} s`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}

/** A duration as a setting is written, in its largest whole unit: `0s`, `1500ms`, `90s`, `10m`, `2h`, `7d`. */
export function settingDuration(ms: number): string {
  if (ms === 0) return '0s';
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const unit = units.find(([, size]) => ms % size === 0);
  return unit ? `${ms / unit[1]}${unit[0]}` : `${ms}ms`;
}
