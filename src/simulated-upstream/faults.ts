import { z } from 'zod';
import type { MutationDescription } from './data.js';

// `page` names the page(s) a switch applies to; omitted, it applies to every page (and, for the
// switches that act before pagination, to requests whose page is invalid too).
const pageSelector = z.union([z.number().int().positive(), z.array(z.number().int().positive())]).optional();
const times = z.number().int().positive().default(1);

export const faultSettingsSchema = z.strictObject({
  /** Milliseconds added before every response (all requests, all paths). */
  latency: z.number().int().nonnegative().optional(),
  /** Answer a 5xx `times` times, then recover. */
  status5xx: z
    .strictObject({
      page: pageSelector,
      times,
      status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).default(503),
    })
    .optional(),
  /** Answer 429 with Retry-After (seconds, or an HTTP date as a string or Date) `times` times. */
  rateLimit: z
    .strictObject({
      page: pageSelector,
      times,
      retryAfter: z.union([z.number().int().nonnegative(), z.string().min(1), z.date()]).default(1),
    })
    .optional(),
  /** Full Content-Length, half the body, then a clean close (FIN). */
  truncatedBody: z.strictObject({ page: pageSelector }).optional(),
  /** Half the body, then a TCP reset. */
  resetMidBody: z.strictObject({ page: pageSelector }).optional(),
  /** A 200 application/json whose body is not JSON (the page body without its closing brace). */
  invalidJson: z.strictObject({ page: pageSelector }).optional(),
  /** The page body padded with JSON whitespace to `bytes`; `chunked` hides the size until the end. */
  oversizeBody: z
    .strictObject({
      page: pageSelector,
      bytes: z.number().int().positive(),
      chunked: z.boolean().default(false),
    })
    .optional(),
  /** Replaces (or with `missing`, deletes) one field of results[index] on the page. */
  invalidEntry: z
    .strictObject({
      page: pageSelector,
      index: z.number().int().nonnegative().default(0),
      field: z.string(),
      value: z.unknown().optional(),
      missing: z.boolean().default(false),
    })
    .optional(),
  /** Once page `afterPage` has been served, `add` new rows join the listing (fires once). */
  countDrift: z
    .strictObject({
      afterPage: z.number().int().positive().default(1),
      add: z.number().int().positive().default(1),
      at: z.enum(['start', 'end']).default('start'),
    })
    .optional(),
  /** `next` points to another origin. */
  foreignNext: z
    .strictObject({ page: pageSelector, origin: z.string().default('http://evil.example') })
    .optional(),
  /** `next` points back to page `to`. */
  nextLoop: z.strictObject({ page: pageSelector, to: z.number().int().positive().default(1) }).optional(),
  /**
   * Every page is cut from a fresh random order, as an unordered queryset does under LIMIT/OFFSET
   * (DRF #6886): rows repeat and go missing across pages while count stays right.
   */
  unordered: z.strictObject({ seed: z.number().int().default(1) }).optional(),
  /** count 0, results [] (DRF's answer for an empty table). */
  emptyListing: z.boolean().optional(),
  /** Never answer (until the server closes). */
  hang: z.strictObject({ page: pageSelector }).optional(),
});

export type FaultSettings = z.infer<typeof faultSettingsSchema>;
export type FaultSettingsInput = z.input<typeof faultSettingsSchema>;
export type FaultName = keyof FaultSettings;

/** A fault that actually fired, in order; tests assert on these. */
export interface FaultEvent {
  readonly fault: FaultName;
  /** The page of the request, null when it was not a valid page. */
  readonly page: number | null;
  readonly status?: number;
  readonly change?: MutationDescription;
}

/** The switch board tests and the demo hold. */
export interface FaultSwitches {
  /** Turns switches on (each named switch replaces its previous setting); validated by the schema. */
  set(settings: FaultSettingsInput): void;
  /** Turns one switch off, or all of them. */
  clear(name?: FaultName): void;
  /** The switches now on, with counters as they stand. */
  readonly active: Readonly<FaultSettings>;
  readonly events: readonly FaultEvent[];
}

type PageScoped = {
  [K in FaultName]: NonNullable<FaultSettings[K]> extends { page?: unknown } ? K : never;
}[FaultName];

function selects(selector: number | number[] | undefined, page: number | null): boolean {
  if (selector === undefined) return true;
  if (page === null) return false;
  return typeof selector === 'number' ? selector === page : selector.includes(page);
}

/** The server's side of the switch board: matching, counting down and logging. */
export class FaultState implements FaultSwitches {
  #active: FaultSettings = {};
  readonly #events: FaultEvent[] = [];

  set(settings: FaultSettingsInput): void {
    const parsed = faultSettingsSchema.parse(settings);
    const defined = Object.entries(parsed).filter(([, value]) => value !== undefined);
    this.#active = { ...this.#active, ...(Object.fromEntries(defined) as FaultSettings) };
  }

  clear(name?: FaultName): void {
    if (name === undefined) this.#active = {};
    else delete this.#active[name];
  }

  get active(): Readonly<FaultSettings> {
    return this.#active;
  }

  get events(): readonly FaultEvent[] {
    return this.#events;
  }

  /** The switch's setting when it is on and selects `page`. */
  match<K extends PageScoped>(name: K, page: number | null): NonNullable<FaultSettings[K]> | undefined {
    const setting = this.#active[name];
    if (setting === undefined) return undefined;
    return selects(setting.page, page) ? setting : undefined;
  }

  /** For counted switches: takes one use when it applies; the switch turns off when used up. */
  take<K extends 'status5xx' | 'rateLimit'>(
    name: K,
    page: number | null,
  ): NonNullable<FaultSettings[K]> | undefined {
    const setting = this.match(name, page);
    if (setting === undefined) return undefined;
    if (setting.times <= 1) delete this.#active[name];
    else this.#active = { ...this.#active, [name]: { ...setting, times: setting.times - 1 } };
    return setting;
  }

  record(event: FaultEvent): void {
    this.#events.push(event);
  }
}
