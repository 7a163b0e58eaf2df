import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { changeKinds } from '../db/schema.js';
import { parseWhen } from '../time/parse-when.js';

const positiveInt = (name: string, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().int().min(1, `${name} must be at least 1`).max(max, `${name} must be at most ${max}`));

const when = () =>
  z.string().transform((value, ctx) => {
    const parsed = parseWhen(value);
    if (parsed.ok) return parsed.iso;
    ctx.addIssue({
      code: 'custom',
      message: `${parsed.problem} (got ${JSON.stringify(value.slice(0, 100))})`,
    });
    return z.NEVER;
  });

const uuid = z.string().regex(/^[a-z0-9]{32}$/, 'uuid must be 32 lowercase letters or digits');

export const pageQuery = z.object({
  page: positiveInt('page', 1_000_000).optional(),
  page_size: positiveInt('page_size', 500).optional(),
});

export const changesQuery = z.object({
  since: when().optional(),
  until: when().optional(),
  uuid: uuid.optional(),
  field: z.string().min(1).max(200).optional(),
  kind: z.enum(changeKinds).optional(),
  before: positiveInt('before', Number.MAX_SAFE_INTEGER).optional(),
  page_size: positiveInt('page_size', 500).optional(),
});

export const uuidParam = z.object({ uuid });
export const runIdParam = z.object({ id: positiveInt('id', Number.MAX_SAFE_INTEGER) });

/**
 * Parses query or path parameters; on failure answers 400 with a body naming the parameter and
 * returns null. Repeated parameters are refused rather than silently picking one.
 */
export function parseParams<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  reply: FastifyReply,
): z.output<S> | null {
  const values = (raw ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(values)) {
    if (Array.isArray(value)) {
      void reply.code(400).send({ detail: `parameter ${name} given more than once`, parameter: name });
      return null;
    }
  }
  const strict = schema instanceof z.ZodObject ? schema.strict() : schema;
  const parsed = strict.safeParse(values);
  if (parsed.success) return parsed.data as z.output<S>;
  const issue = parsed.error.issues[0];
  const unknown = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const parameter = unknown ?? String(issue?.path[0] ?? '');
  const detail = unknown ? `unknown parameter ${unknown}` : `${parameter}: ${issue?.message ?? 'invalid'}`;
  void reply.code(400).send({ detail, parameter });
  return null;
}

/** How absolute links name this service: as the list endpoint does (public base, trusted proxy headers, Host). */
export interface LinkBase {
  publicBaseUrl: string | null;
  trustProxy: boolean;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text?.split(',')[0]?.trim() || undefined;
}

/**
 * The address a request without Host (HTTP/1.0) came to, as the list endpoint names its listener:
 * with INTERNAL_PORT set, each listener's links name that listener.
 */
function localOrigin(request: FastifyRequest): string {
  const { localAddress, localPort } = request.socket;
  if (localAddress === undefined || localPort === undefined) return 'localhost';
  return localAddress.includes(':') ? `[${localAddress}]:${localPort}` : `${localAddress}:${localPort}`;
}

/** Absolute URL of this request's path with `params` replacing its query. */
export function selfUrl(
  request: FastifyRequest,
  params: Record<string, string | number | undefined>,
  base: LinkBase,
): string {
  const path = request.url.split('?')[0] ?? '/';
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, String(v));
  const qs = query.toString();
  const requestHost = request.host || localOrigin(request);
  let origin = `${request.protocol}://${requestHost}`;
  if (base.publicBaseUrl) origin = base.publicBaseUrl;
  else if (base.trustProxy) {
    const proto = firstHeader(request.headers['x-forwarded-proto']) ?? request.protocol;
    const host = firstHeader(request.headers['x-forwarded-host']) ?? requestHost;
    origin = `${proto}://${host}`;
  }
  return `${origin}${path}${qs ? `?${qs}` : ''}`;
}
