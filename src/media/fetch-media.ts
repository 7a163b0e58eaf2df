import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { Agent, request, type Dispatcher } from 'undici';
import { eitherSignal } from '../abort.js';
import { isAllowedMediaUrl } from './media-refs.js';
import type { MediaStore } from './media-store.js';
import { checkType, SNIFF_BYTES } from './sniff.js';

/** Why one media URL could not be mirrored this run; recorded per URL, never a failed run. */
export type MediaFailureCode =
  | 'MEDIA_HTTP_STATUS'
  | 'MEDIA_NETWORK'
  | 'MEDIA_TIMEOUT'
  | 'MEDIA_TOO_LARGE'
  | 'MEDIA_RUN_BUDGET'
  | 'MEDIA_TYPE_MISMATCH'
  | 'MEDIA_REDIRECT_REFUSED'
  | 'MEDIA_STORE_FAILED';

/** The validators of the bytes already held for a URL, sent as a conditional request. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export type FetchOutcome =
  | {
      kind: 'fetched';
      sha256: string;
      size: number;
      contentType: string;
      etag: string | null;
      lastModified: string | null;
      bytes: number;
      /**
       * Settles once the file is fsynced and renamed into place (its directory is fsynced by
       * `MediaStore.flushDirectories`). Off the download's path, so disk and network overlap;
       * rejects with a MEDIA_STORE_FAILED reason.
       */
      durable: Promise<void>;
    }
  | { kind: 'revalidated'; etag: string | null; lastModified: string | null; bytes: 0 }
  | { kind: 'failed'; code: MediaFailureCode; message: string; bytes: number };

/** Bytes one run may still download; shared by every download of the run. */
export class RunBudget {
  #remaining: number;
  constructor(bytes: number) {
    this.#remaining = bytes;
  }
  get exhausted(): boolean {
    return this.#remaining <= 0;
  }
  take(bytes: number): boolean {
    this.#remaining -= bytes;
    return this.#remaining >= 0;
  }
}

export interface MediaFetcherOptions {
  origins: readonly string[];
  store: MediaStore;
  maxBytes: number;
  /** Total deadline of one request, connect to last byte, redirects included. */
  timeoutMs: number;
  connectTimeoutMs: number;
  concurrency: number;
  userAgent: string;
  /** The run's abort: ends every download at once. */
  signal?: AbortSignal;
}

class Failure extends Error {
  constructor(
    readonly code: MediaFailureCode,
    message: string,
    readonly bytes = 0,
  ) {
    super(message);
  }
}

const MAX_REDIRECTS = 5;

/**
 * Downloads media into the store. Its own connection pool, and only a User-Agent and validators
 * as headers: nothing the upstream client sends (credentials included) ever reaches a media host.
 * Redirects are followed by hand, and only to listed origins.
 */
export class MediaFetcher {
  readonly #options: MediaFetcherOptions;
  readonly #origins: ReadonlySet<string>;
  readonly #agent: Agent;

  constructor(options: MediaFetcherOptions) {
    this.#options = options;
    this.#origins = new Set(options.origins);
    this.#agent = new Agent({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connections: options.concurrency,
    });
  }

  async fetch(url: string, validators: Validators | null, budget: RunBudget): Promise<FetchOutcome> {
    if (budget.exhausted) {
      return { kind: 'failed', code: 'MEDIA_RUN_BUDGET', message: 'run media byte budget spent', bytes: 0 };
    }
    const deadline = AbortSignal.timeout(this.#options.timeoutMs);
    // The run's signal outlives every fetch: joined by hand, and left when the fetch ends (abort.ts).
    const [signal, unfollow] = eitherSignal(deadline, this.#options.signal);
    try {
      return await this.#follow(url, validators, budget, signal);
    } catch (error) {
      if (this.#options.signal?.aborted) throw error;
      if (error instanceof Failure)
        return { kind: 'failed', code: error.code, message: error.message, bytes: error.bytes };
      if (deadline.aborted) {
        return {
          kind: 'failed',
          code: 'MEDIA_TIMEOUT',
          message: `no complete answer within ${this.#options.timeoutMs} ms`,
          bytes: 0,
        };
      }
      const code = (error as { code?: unknown }).code;
      return {
        kind: 'failed',
        code: 'MEDIA_NETWORK',
        message: `${typeof code === 'string' ? `${code}: ` : ''}${(error as Error).message}`,
        bytes: 0,
      };
    } finally {
      unfollow();
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }

  async #follow(
    url: string,
    validators: Validators | null,
    budget: RunBudget,
    signal: AbortSignal,
  ): Promise<FetchOutcome> {
    let target = url;
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { 'user-agent': this.#options.userAgent, accept: '*/*' };
      if (validators?.etag) headers['if-none-match'] = validators.etag;
      if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified;
      const res = await request(target, { dispatcher: this.#agent, method: 'GET', headers, signal });
      const status = res.statusCode;
      if (status === 304 && validators) {
        await res.body.dump();
        return {
          kind: 'revalidated',
          etag: header(res, 'etag') ?? validators.etag,
          lastModified: header(res, 'last-modified') ?? validators.lastModified,
          bytes: 0,
        };
      }
      if (status >= 300 && status < 400) {
        await res.body.dump();
        target = this.#redirectTarget(target, header(res, 'location'), hop);
        continue;
      }
      if (status !== 200) {
        await res.body.dump();
        throw new Failure('MEDIA_HTTP_STATUS', `answered ${status}`);
      }
      return await this.#receive(res, budget);
    }
  }

  #redirectTarget(from: string, location: string | undefined, hop: number): string {
    if (hop >= MAX_REDIRECTS)
      throw new Failure('MEDIA_REDIRECT_REFUSED', `more than ${MAX_REDIRECTS} redirects`);
    const next = location !== undefined && URL.canParse(location, from) ? new URL(location, from).href : null;
    if (next === null || !isAllowedMediaUrl(next, this.#origins)) {
      throw new Failure(
        'MEDIA_REDIRECT_REFUSED',
        `redirect to ${JSON.stringify(location?.slice(0, 200) ?? null)} leaves MEDIA_ORIGINS`,
      );
    }
    return next;
  }

  /** Streams the body to a temp file while hashing it, then moves it into place durably. */
  async #receive(res: Dispatcher.ResponseData, budget: RunBudget): Promise<FetchOutcome> {
    const { maxBytes, store } = this.#options;
    const declaredLength = Number(header(res, 'content-length') ?? Number.NaN);
    if (declaredLength > maxBytes) {
      await res.body.dump({ limit: 0 }).catch(() => undefined);
      throw new Failure(
        'MEDIA_TOO_LARGE',
        `Content-Length ${declaredLength} exceeds MEDIA_MAX_BYTES ${maxBytes}`,
      );
    }
    const temp = await store.createTemp();
    const hash = createHash('sha256');
    let size = 0;
    let head = Buffer.alloc(0);
    let open = true;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes)
          throw new Failure('MEDIA_TOO_LARGE', `body exceeds MEDIA_MAX_BYTES ${maxBytes}`, size);
        if (!budget.take(chunk.length))
          throw new Failure('MEDIA_RUN_BUDGET', 'run media byte budget (MEDIA_RUN_MAX_BYTES) spent', size);
        if (head.length < SNIFF_BYTES)
          head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        hash.update(chunk);
        await temp.handle.write(chunk);
      }
      const type = checkType(header(res, 'content-type'), head);
      if (!type.ok) throw new Failure('MEDIA_TYPE_MISMATCH', type.reason, size);
      const sha256 = hash.digest('hex');
      // From here the file is the durable step's to finish or remove.
      open = false;
      const durable = makeDurable(store, temp, sha256);
      // Awaited by the media phase later; marked handled now so a failure cannot end the process.
      durable.catch(() => undefined);
      return {
        kind: 'fetched',
        sha256,
        size,
        contentType: type.contentType,
        etag: header(res, 'etag') ?? null,
        lastModified: header(res, 'last-modified') ?? null,
        bytes: size,
        durable,
      };
    } catch (error) {
      res.body.destroy();
      if (open) await temp.handle.close().catch(() => undefined);
      await store.discardTemp(temp.path);
      if (error instanceof Failure) throw error;
      throw Object.assign(error as Error, { bytes: size });
    }
  }
}

async function makeDurable(
  store: MediaStore,
  temp: { path: string; handle: FileHandle },
  sha256: string,
): Promise<void> {
  try {
    await temp.handle.sync();
    await temp.handle.close();
    await store.commitTemp(temp.path, sha256);
  } catch (error) {
    await temp.handle.close().catch(() => undefined);
    await store.discardTemp(temp.path);
    throw new Error(`cannot store the file: ${(error as Error).message}`, { cause: error });
  }
}

function header(res: Dispatcher.ResponseData, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
