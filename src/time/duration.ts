/** `90s`, `10m`, `7d`, `1.5h` or plain milliseconds → milliseconds; null when it is none of those. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'] ?? 1;
  return Math.round(Number(match[1]) * unit);
}
