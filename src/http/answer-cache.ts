import type { IncomingHttpHeaders } from 'node:http';
import type { DrfResponse, ServerInfo } from '../drf/answer.js';
import type { PreparedSnapshot } from '../drf/snapshot.js';
import { isSharedTail } from '../drf/results-tail.js';

// Map entry, key object and header arrays: a fair price per cached answer besides its bytes.
const ENTRY_OVERHEAD_BYTES = 256;
// Below this a page is joined into one buffer (one write, like a static file); above, the shared
// tail stays shared so many distinct queries on big pages cost their heads only.
const JOIN_BELOW_BYTES = 16 * 1024;

function joined(answer: DrfResponse): DrfResponse {
  if (answer.body.length < 2) return answer;
  let length = 0;
  for (const chunk of answer.body) length += chunk.length;
  return length < JOIN_BELOW_BYTES ? { ...answer, body: [Buffer.concat(answer.body, length)] } : answer;
}

interface Entry {
  snapshot: PreparedSnapshot;
  answer: DrfResponse;
  bytes: number;
}

// Parts are separated by LF and an absent header is NUL: neither can be in a part Node parsed, but a
// head read off a refused packet might carry them, and then it is not cached at all (null).
function part(value: string | string[] | undefined): string | null {
  if (value === undefined) return '\0';
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text.includes('\n') || text.includes('\0') ? null : text;
}

/**
 * Prepared answers by the parts of a request that decide them (method, target, the few headers DRF
 * reads, the scheme), so the same page asked the same way is one map lookup. Bounded in bytes: an
 * answer costs its key, headers and own body chunks; a page tail shared with the snapshot costs
 * nothing, so 300 distinct `?x=i` on a big page cost 300 small heads, not 300 copies. Oldest
 * entries go first; a new current snapshot empties it. `If-None-Match` bypasses it.
 */
export class AnswerCache {
  readonly #entries = new Map<string, Entry>();
  readonly #budget: number;
  #bytes = 0;
  #current: PreparedSnapshot | null = null;

  constructor(budgetBytes: number) {
    this.#budget = budgetBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * `listener` is the listening socket a request without Host names in its links: one cache serves
   * both listeners when INTERNAL_PORT is set, and each names its own.
   */
  static key(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    scheme: string,
    trustProxy: boolean,
    listener?: Pick<ServerInfo, 'name' | 'port'>,
  ): string | null {
    if (headers['if-none-match'] !== undefined) return null;
    const host =
      headers.host === undefined
        ? '\0' + (listener === undefined ? '' : listener.name + ':' + listener.port)
        : part(headers.host);
    const accept = part(headers.accept);
    if (host === null || accept === null || url.includes('\n')) return null;
    // Concatenation, checked part by part: no split of the key on every request.
    const key = method + '\n' + url + '\n' + host + '\n' + accept + '\n' + scheme;
    if (!trustProxy) return key;
    const forwardedHost = part(headers['x-forwarded-host']);
    const forwardedProto = part(headers['x-forwarded-proto']);
    if (forwardedHost === null || forwardedProto === null) return null;
    return key + '\n' + forwardedHost + '\n' + forwardedProto;
  }

  /** Drops every answer when the served snapshot changes (old answers would pin the old one). */
  follow(current: PreparedSnapshot | null): void {
    if (current === this.#current) return;
    this.#current = current;
    this.#entries.clear();
    this.#bytes = 0;
  }

  get(snapshot: PreparedSnapshot, key: string): DrfResponse | undefined {
    const entry = this.#entries.get(key);
    return entry?.snapshot === snapshot ? entry.answer : undefined;
  }

  /** Keeps `answer` (or its joined form) within the budget; returns what to send. */
  set(snapshot: PreparedSnapshot, key: string, fresh: DrfResponse): DrfResponse {
    const answer = joined(fresh);
    const bytes = this.#cost(key, answer);
    if (bytes > this.#budget) return answer;
    const old = this.#entries.get(key);
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= old.bytes;
    }
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes + bytes <= this.#budget) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
    }
    this.#entries.set(key, { snapshot, answer, bytes });
    this.#bytes += bytes;
    return answer;
  }

  #cost(key: string, answer: DrfResponse): number {
    let bytes = ENTRY_OVERHEAD_BYTES + key.length * 2;
    for (const [name, value] of answer.headers) bytes += (name.length + value.length) * 2;
    // A page tail is the snapshot's, told by identity: collecting every tail of a past snapshot
    // here built all its pages on its first request (a `?as_of=` stall that grew with the listing).
    for (const chunk of answer.body) if (!isSharedTail(chunk)) bytes += chunk.length;
    return bytes;
  }
}
