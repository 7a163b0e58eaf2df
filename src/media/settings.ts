import { dirname, join } from 'node:path';
import type { Config } from '../config.js';

/** What a sync needs to mirror media; null when MEDIA_ORIGINS is unset. */
export interface MediaSettings {
  origins: readonly string[];
  dir: string;
  maxBytes: number;
  runMaxBytes: number;
  concurrency: number;
  timeoutMs: number;
  connectTimeoutMs: number;
  retentionMs: number | null;
}

/** Where the files live: MEDIA_DIR, else `media/` beside the database file. */
export function mediaDirFrom(config: Pick<Config, 'mediaDir' | 'databasePath'>): string {
  return config.mediaDir ?? join(dirname(config.databasePath), 'media');
}

export function mediaSettingsFrom(config: Config): MediaSettings | null {
  const origins = config.mediaOrigins ?? [];
  if (origins.length === 0) return null;
  return {
    origins,
    dir: mediaDirFrom(config),
    maxBytes: config.mediaMaxBytes,
    runMaxBytes: config.mediaRunMaxBytes,
    concurrency: config.mediaConcurrency,
    timeoutMs: config.mediaTimeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    retentionMs: config.mediaRetentionMs,
  };
}
