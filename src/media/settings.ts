import type { MediaConfig } from '../config/load-config.js';

/**
 * What a sync needs to mirror media: the media settings with MEDIA_ORIGINS named, and the connect
 * timeout its requests share with the upstream's (UPSTREAM_CONNECT_TIMEOUT).
 */
export type MediaSettings = Omit<MediaConfig, 'origins' | 'rewrite'> & {
  origins: readonly string[];
  connectTimeoutMs: number;
};
