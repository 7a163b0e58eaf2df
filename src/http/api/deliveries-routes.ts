import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { z } from 'zod';
import type { Store } from '../../db/store.js';
import { deliveryStatuses } from '../../db/schema.js';
import { getDelivery, listDeliveries } from '../../webhooks/delivery-queries.js';
import { redeliver } from '../../webhooks/delivery-store.js';
import { adminOnly } from './admin-auth.js';
import { pageQuery, parseParams, runIdParam, selfUrl, type LinkBase } from '../../request/params.js';
import { keepLast } from '../last-known.js';

const deliveriesQuery = pageQuery.extend({
  status: z.enum(deliveryStatuses).optional(),
  endpoint: z
    .string()
    .regex(/^\d+$/, 'endpoint must be an endpoint id (a whole number)')
    .transform(Number)
    .optional(),
});

const DEFAULT_PAGE_SIZE = 50;

export interface DeliveryRoutesOptions extends LinkBase {
  adminToken: string | null;
  registry: Registry;
  /** DATABASE_PROBE_TIMEOUT: a scrape reads the delivery figures within it, else the last known. */
  probeTimeoutMs: number;
  /** WEBHOOK_URLS: the database names endpoints by key; these give the masked URLs back. */
  webhookUrls?: readonly string[];
}

/**
 * The webhook delivery log: GET /api/mirror/deliveries/ (filter by status, endpoint), one delivery
 * with its attempts, and POST …/redeliver (admin token; the route exists only with one). Also the
 * delivery gauges of /metrics, read from the database at scrape time like the run figures.
 */
export function registerDeliveryRoutes(
  app: FastifyInstance,
  store: Store,
  options: DeliveryRoutesOptions,
): void {
  registerDeliveryGauges(options.registry, store, options.probeTimeoutMs);

  // DRF's page-number envelope, with the filters kept in next/previous.
  app.get('/api/mirror/deliveries/', async (request, reply) => {
    const query = parseParams(deliveriesQuery, request.query, reply);
    if (!query) return reply;
    const page = query.page ?? 1;
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const filter = { status: query.status, endpoint: query.endpoint };
    const count = await store.countDeliveries(filter);
    const results = await listDeliveries(
      store,
      {
        ...filter,
        limit: pageSize,
        offset: (page - 1) * pageSize,
      },
      options.webhookUrls,
    );
    const link = (to: number | undefined) =>
      selfUrl(
        request,
        { status: query.status, endpoint: query.endpoint, page: to, page_size: query.page_size },
        options,
      );
    const last = Math.max(1, Math.ceil(count / pageSize));
    return {
      count,
      next: page < last ? link(page + 1) : null,
      previous: page > 1 ? link(page === 2 ? undefined : page - 1) : null,
      results,
    };
  });

  app.get('/api/mirror/deliveries/:id/', async (request, reply) => {
    const params = parseParams(runIdParam, request.params, reply);
    if (!params) return reply;
    const delivery = await getDelivery(store, params.id, options.webhookUrls);
    return delivery ?? reply.code(404).send({ detail: `no delivery ${params.id}` });
  });

  const adminToken = options.adminToken;
  if (!adminToken) return;
  app.post('/api/mirror/deliveries/:id/redeliver', adminOnly(adminToken), async (request, reply) => {
    const params = parseParams(runIdParam, request.params, reply);
    if (!params) return reply;
    if (!(await redeliver(store, params.id))) {
      return reply.code(404).send({ detail: `no delivery ${params.id}` });
    }
    request.log.info({ deliveryId: params.id }, 'webhook redelivery requested');
    return reply.code(202).send({
      detail: 'Redelivery queued.',
      delivery: params.id,
      url: `/api/mirror/deliveries/${params.id}/`,
    });
  });
}

function registerDeliveryGauges(registry: Registry, store: Store, deadlineMs: number): void {
  const read = keepLast(() => store.deliveryFigures(), deadlineMs);
  new Gauge({
    name: 'coworker_mirror_webhook_deliveries',
    help: 'Webhook deliveries, by status (pending includes those waiting for a retry)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const figures = await read();
      if (figures === null) return;
      for (const status of deliveryStatuses) this.set({ status }, figures.value.byStatus.get(status) ?? 0);
    },
  });
  new Gauge({
    name: 'coworker_mirror_webhook_endpoints_disabled',
    help: 'Webhook endpoints disabled by a 410 Gone until re-enabled',
    registers: [registry],
    async collect() {
      const figures = await read();
      if (figures !== null) this.set(figures.value.disabledEndpoints);
    },
  });
}
