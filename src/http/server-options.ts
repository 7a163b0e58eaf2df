import type { Config } from '../config.js';
import { mediaDirFrom } from '../media/settings.js';

export interface ServerOptions {
  trustProxy: boolean;
  publicBaseUrl: string | null;
  cacheControl: string | null;
  staleAfterMs: number;
  snapshotPollMs: number;
  adminToken: string | null;
  /** Peers whose X-Forwarded-Proto/-Ssl/-Protocol set the scheme, as gunicorn's forwarded_allow_ips. */
  forwardedAllowIps: readonly string[];
  /** How long an idle keep-alive connection stays open (above a proxy's own idle timeout). */
  keepAliveTimeoutMs: number;
  /** When set, /metrics answers only `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** Byte budget of the list endpoint's answer cache. */
  listCacheBytes: number;
  /** Mirrored media: the folder served under /media/, and whether the list points at it. */
  media?: { dir: string; rewrite: boolean };
  /** Whole-request receive deadline (HTTP_REQUEST_TIMEOUT); default 30 s. */
  httpRequestTimeoutMs?: number;
  /** Byte budget of the `?as_of=` snapshot cache (AS_OF_CACHE_BYTES); default 64 MiB. */
  asOfCacheBytes?: number;
}

/** The server's part of the parsed configuration. */
export function serverOptionsFrom(config: Config): ServerOptions {
  return {
    trustProxy: config.trustProxy,
    publicBaseUrl: config.publicBaseUrl,
    cacheControl: config.cacheControl === 'none' ? null : config.cacheControl,
    staleAfterMs: config.staleAfterMs,
    snapshotPollMs: config.snapshotPollMs,
    adminToken: config.adminToken,
    forwardedAllowIps: config.forwardedAllowIps,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    metricsToken: config.metricsToken,
    listCacheBytes: config.listCacheBytes,
    media: { dir: mediaDirFrom(config), rewrite: config.mediaRewrite },
    httpRequestTimeoutMs: config.httpRequestTimeoutMs,
    asOfCacheBytes: config.asOfCacheBytes,
  };
}
