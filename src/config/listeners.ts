import { isIP } from 'node:net';
import type { Issue } from './raw-settings.js';
import { settings } from './setting-table.js';

/** The addresses the server listens on, as the settings table parses them. */
export interface ListenerSettings {
  host: string;
  port: number;
  internalHost: string;
  internalPort: number | null;
}

/**
 * Whether two hosts would take the same socket at one port: the same text, or a wildcard covering
 * the other (`::` takes IPv4 too on a dual-stack host; `0.0.0.0` every IPv4 address and any name).
 */
function sameSocket(a: string, b: string): boolean {
  if (a === b || a === '::' || b === '::') return true;
  if (a === '0.0.0.0') return isIP(b) !== 6;
  if (b === '0.0.0.0') return isIP(a) !== 6;
  return false;
}

const socketText = (host: string, port: number): string =>
  isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;

/**
 * What the two listeners' settings contradict: an internal listener on the public one's socket
 * (the second could never listen, or the split would be no split), and an INTERNAL_HOST of its own
 * without INTERNAL_PORT (someone who meant to hide the pages would find them on PORT still). Its
 * default written out says nothing: an environment template, or the one `start` gives its syncs.
 */
export function listenerContradictions(server: ListenerSettings): Issue[] {
  const { host, port, internalHost, internalPort } = server;
  if (internalPort === null) {
    if (internalHost === settings.server.internalHost.default) return [];
    return [
      {
        name: 'INTERNAL_HOST',
        problem:
          `is ${internalHost} but INTERNAL_PORT is not set, so everything is served on PORT: ` +
          'set INTERNAL_PORT too, or unset INTERNAL_HOST',
      },
    ];
  }
  // Port 0 is any free port: two of them never meet.
  if (internalPort === 0 || internalPort !== port || !sameSocket(host, internalHost)) return [];
  return [
    {
      name: 'INTERNAL_PORT',
      problem:
        `${socketText(internalHost, internalPort)} is where PORT listens already (${socketText(host, port)}): the internal ` +
        'listener needs a port of its own; choose another INTERNAL_PORT',
    },
  ];
}

/** The settings that say where the pages for people answer. */
export interface PageAddressSettings {
  internalPort: number | null;
  internalBaseUrl: string | null;
  publicBaseUrl: string | null;
}

/**
 * Where people reach the pages, for the links of chat and mail messages: INTERNAL_BASE_URL, else
 * PUBLIC_BASE_URL while the pages answer there. With INTERNAL_PORT set they do not, and a link to
 * them would get PORT's 404: then no link, rather than a broken one.
 */
export function pagesBaseUrl(server: PageAddressSettings): string | null {
  if (server.internalBaseUrl !== null) return server.internalBaseUrl;
  return server.internalPort === null ? server.publicBaseUrl : null;
}
