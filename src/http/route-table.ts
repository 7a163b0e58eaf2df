import type { FastifyInstance, HTTPMethods } from 'fastify';

/** A route as Fastify registered it: its methods and its URL pattern (`/runs/:id/`). */
export interface RegisteredRoute {
  methods: readonly HTTPMethods[];
  url: string;
}

/**
 * The routes Fastify answers, as the front router sees them: built from the routes themselves
 * through the `onRoute` hook, so a new route is reachable over a real socket without a second list
 * of paths beside it. Every other path is DRF's (its list, its redirects, its 404 byte for byte).
 */
export interface RouteTable {
  readonly routes: readonly RegisteredRoute[];
  /**
   * True for a path some route answers under any method routes were registered with: a wrong
   * method on a Fastify path gets Fastify's answer, as an unknown path gets DRF's.
   */
  has: (path: string) => boolean;
}

/** A table that fills itself with the routes of `app`; call `collectFrom` before any route is registered. */
export function createRouteTable(): RouteTable & { collectFrom(app: FastifyInstance): void } {
  const routes: RegisteredRoute[] = [];
  const methods = new Set<HTTPMethods>();
  let router: FastifyInstance | undefined;
  return {
    routes,
    has: (path) => {
      for (const method of methods) if (router?.findRoute({ method, url: path })) return true;
      return false;
    },
    collectFrom(app) {
      router = app;
      app.addHook('onRoute', (route) => {
        const own = [route.method].flat();
        for (const method of own) methods.add(method);
        routes.push({ methods: own, url: route.url });
      });
    },
  };
}
