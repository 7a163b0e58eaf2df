import { ConfigError } from '../errors.js';
import { startSimulatedMediaHost, type SimulatedMediaHost } from './media-host.js';
import { startSimulatedUpstream, type SimulatedUpstream, type SimulatedUpstreamOptions } from './server.js';

export interface SimulatedSiteOptions extends Pick<SimulatedUpstreamOptions, 'seed' | 'count' | 'entries'> {
  /** Where both listen; 127.0.0.1 unless given. */
  host?: string;
  /** The upstream's port; its media host takes the next one (0: any free port for each). */
  port: number;
  /** The setting or flag a person changes when a port or the host is refused, e.g. `DEMO_UPSTREAM_PORT`. */
  names: { port: string; host?: string };
}

/** The simulated upstream and the media host its listing's media URLs name. */
export interface SimulatedSite {
  upstream: SimulatedUpstream;
  /** Real PNG/JPEG/WebP/WebM/MP4/GIF bytes with ETag and Last-Modified. */
  media: SimulatedMediaHost;
  close(): Promise<void>;
}

/**
 * The media host listens on the port after the upstream's, so media URLs stay the same across
 * restarts (a new port would read as every image changing); with port 0 both take any free port.
 */
function mediaPortFor(port: number): number {
  return port === 0 ? 0 : port + 1;
}

const PORT_REFUSED = new Set(['EADDRINUSE', 'EACCES']);
const HOST_REFUSED = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);

/** A refused listen as the setting to change; any other error as it came. */
function refusal(error: unknown, host: string, port: number, names: SimulatedSiteOptions['names']): unknown {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (PORT_REFUSED.has(code)) {
    return new ConfigError([
      {
        name: names.port,
        problem: `cannot listen on ${host}:${port} (${code}); choose another ${names.port} (0: any free port)`,
      },
    ]);
  }
  if (HOST_REFUSED.has(code)) {
    return new ConfigError([
      {
        name: names.host ?? names.port,
        problem: `cannot listen on ${JSON.stringify(host)} (${code}): it is not an address of this machine`,
      },
    ]);
  }
  return error;
}

/**
 * Starts the simulated upstream with its media on a media host beside it, as the demo and
 * `coworker-mirror simulate` run it: a mirror given MEDIA_ORIGINS=`media.url` mirrors every media
 * URL the listing names. The media host listens first; a port that cannot be listened on is a
 * ConfigError naming `names.port`.
 */
export async function startSimulatedSite(options: SimulatedSiteOptions): Promise<SimulatedSite> {
  const host = options.host ?? '127.0.0.1';
  const mediaPort = mediaPortFor(options.port);
  if (mediaPort > 65535) {
    throw new ConfigError([
      {
        name: options.names.port,
        problem: `${options.port} leaves no next port for the media host; choose one below 65535 (0: any free port)`,
      },
    ]);
  }
  const media = await startSimulatedMediaHost({ host, port: mediaPort }).catch((error: unknown) => {
    throw refusal(error, host, mediaPort, options.names);
  });
  let upstream: SimulatedUpstream;
  try {
    upstream = await startSimulatedUpstream({
      seed: options.seed,
      count: options.count,
      entries: options.entries,
      host,
      port: options.port,
      mediaBaseUrl: media.mediaBaseUrl,
    });
  } catch (error) {
    await media.close();
    throw refusal(error, host, options.port, options.names);
  }
  return {
    upstream,
    media,
    close: async () => {
      await upstream.close();
      await media.close();
    },
  };
}
