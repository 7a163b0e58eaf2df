import type { FastifyInstance } from 'fastify';
import type { Store } from '../db/store.js';
import type { LinkBase } from '../request/params.js';
import type { Logger } from '../logger.js';
import { assets } from './assets.js';
import { registerFeedRoutes } from './feed-routes.js';
import { upstreamMedia, type MediaResolver } from './media-source.js';
import { registerPageRoutes } from './page-routes.js';
import type { StatusSource } from './status-source.js';
import type { NotifyTarget } from '../notify/targets.js';

export interface WebDeps {
  store: Store;
  logger: Logger;
  served: () => { runId: number; entries: number; fetchedAt: Date } | null;
  staleAfterMs: number;
  links: LinkBase;
  status?: StatusSource | undefined;
  media?: MediaResolver | undefined;
  /** The pages' one zone; the configured `TZ` (the process's zone) when not given. */
  timeZone?: string | undefined;
  notifyTargets?: readonly Pick<NotifyTarget, 'id' | 'label'>[] | undefined;
  /** What keeps mirrored media files from being served (the folder gone, files unreadable), or null. */
  mediaProblem?: (() => string | null) | undefined;
}

/** Pages, feeds and their static files, on the server's Fastify instance. */
export function registerWeb(app: FastifyInstance, deps: WebDeps): void {
  const media = deps.media ?? upstreamMedia;
  for (const asset of assets) {
    app.get(asset.path, (_request, reply) =>
      reply
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('X-Content-Type-Options', 'nosniff')
        .type(asset.contentType)
        .send(asset.body),
    );
  }
  registerPageRoutes(app, {
    store: deps.store,
    logger: deps.logger.child({ module: 'web' }),
    status: deps.status ?? null,
    served: deps.served,
    staleAfterMs: deps.staleAfterMs,
    ...(deps.notifyTargets ? { notifyTargets: deps.notifyTargets } : {}),
    ...(deps.mediaProblem ? { mediaProblem: deps.mediaProblem } : {}),
    media,
    demo: () => deps.status?.upstream().mode === 'demo',
    ...(deps.timeZone !== undefined ? { timeZone: deps.timeZone } : {}),
  });
  registerFeedRoutes(app, { store: deps.store, media, links: deps.links });
}
