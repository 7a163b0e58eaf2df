import type { FastifyInstance, HTTPMethods } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Answered on the public listener too when INTERNAL_PORT splits the server in two (health
     * checks); every other route answers there only. A public route is a fixed path.
     */
    public?: boolean;
  }
}

/** A route as Fastify registered it: its methods and its URL pattern (`/runs/:id/`). */
export interface RegisteredRoute {
  methods: readonly HTTPMethods[];
  url: string;
  /** Also answered on the public listener (`config: { public: true }`). */
  public: boolean;
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
  /** True for the path of a public route: what the public listener hands Fastify (INTERNAL_PORT). */
  isPublic: (path: string) => boolean;
}

/** A table that fills itself with the routes of `app`; call `collectFrom` before any route is registered. */
export function createRouteTable(): RouteTable & { collectFrom(app: FastifyInstance): void } {
  const routes: RegisteredRoute[] = [];
  const methods = new Set<HTTPMethods>();
  const publicPaths = new Set<string>();
  let router: FastifyInstance | undefined;
  return {
    routes,
    has: (path) => {
      for (const method of methods) if (router?.findRoute({ method, url: path })) return true;
      return false;
    },
    isPublic: (path) => publicPaths.has(path),
    collectFrom(app) {
      router = app;
      app.addHook('onRoute', (route) => {
        const own = [route.method].flat();
        for (const method of own) methods.add(method);
        const isPublic = route.config?.public === true;
        // Compared as text by the front router: a pattern would need a second matcher beside
        // Fastify's, and a parameter on the public side would be easy to widen by mistake.
        if (isPublic && /[:*]/.test(route.url)) {
          throw new Error(`public route ${route.url}: a public route is a fixed path, without parameters`);
        }
        if (isPublic) publicPaths.add(route.url);
        routes.push({ methods: own, url: route.url, public: isPublic });
      });
    },
  };
}
