import { CoworkerFactory, EDITABLE_FIELDS, generateCoworkers, type GenerateOptions } from './generate.js';
import { deriveSeed, Rng } from './prng.js';

/** One row of the listing as served; may be deliberately invalid when tests supply it. */
export type SimulatedEntry = Readonly<Record<string, unknown>>;

export interface PlacedEntry {
  /** Position in the listing (0-based): after the change for additions, before it for removals. */
  readonly index: number;
  readonly entry: SimulatedEntry;
}

export interface FieldEdit {
  readonly index: number;
  readonly uuid: string;
  readonly field: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly entry: SimulatedEntry;
}

/** What a mutation changed, precisely enough for a test to assert the mirror recorded exactly that. */
export type MutationDescription =
  | { readonly kind: 'add'; readonly added: readonly PlacedEntry[]; readonly count: number }
  | { readonly kind: 'edit'; readonly edited: readonly FieldEdit[]; readonly count: number }
  | {
      readonly kind: 'remove';
      readonly removedUuids: readonly string[];
      readonly removed: readonly PlacedEntry[];
      readonly count: number;
    }
  | {
      readonly kind: 'restore';
      readonly restoredUuids: readonly string[];
      readonly restored: readonly PlacedEntry[];
      readonly count: number;
    }
  | {
      readonly kind: 'reorder';
      readonly before: readonly string[];
      readonly after: readonly string[];
      readonly count: number;
    }
  | { readonly kind: 'duplicate'; readonly added: readonly PlacedEntry[]; readonly count: number }
  | { readonly kind: 'set'; readonly count: number };

export type AddPosition = 'start' | 'end' | 'random';

export interface SimulatedDataOptions extends GenerateOptions {
  seed: number;
  count: number;
  entries?: readonly Record<string, unknown>[] | undefined;
}

function freeze(entry: Record<string, unknown>): SimulatedEntry {
  for (const value of Object.values(entry)) if (Array.isArray(value)) Object.freeze(value);
  return Object.freeze(entry);
}

function uuidOf(entry: SimulatedEntry): string {
  return typeof entry.uuid === 'string' ? entry.uuid : String(entry.uuid);
}

/**
 * The mutable, ordered listing behind the simulated upstream. Entries are frozen and replaced, never
 * changed in place, so `version` is the only thing a page cache has to watch.
 */
export class SimulatedData {
  #rows: SimulatedEntry[];
  #version = 0;
  readonly #rng: Rng;
  readonly #factory: CoworkerFactory;
  // Removed coworkers by uuid, oldest first, with the rows and positions they had.
  readonly #removed = new Map<string, PlacedEntry[]>();

  constructor(options: SimulatedDataOptions) {
    this.#rng = new Rng(deriveSeed(options.seed, 'mutations'));
    this.#factory = new CoworkerFactory(new Rng(deriveSeed(options.seed, 'factory')), options.mediaBaseUrl);
    const rows = options.entries
      ? options.entries.map((entry) => structuredClone(entry))
      : generateCoworkers(options.seed, options.count, options);
    this.#rows = rows.map(freeze);
    this.#factory.reserve(this.#rows.map(uuidOf));
  }

  /** Bumped on every change; page caches compare it. */
  get version(): number {
    return this.#version;
  }

  get count(): number {
    return this.#rows.length;
  }

  /** A copy of the current ordered listing. */
  entries(): SimulatedEntry[] {
    return this.#rows.slice();
  }

  at(index: number): SimulatedEntry | undefined {
    return this.#rows[index];
  }

  slice(start: number, end: number): SimulatedEntry[] {
    return this.#rows.slice(start, end);
  }

  /** uuids currently removed and available to `restore`, oldest first. */
  removedUuids(): string[] {
    return [...this.#removed.keys()];
  }

  setEntries(list: readonly Record<string, unknown>[]): MutationDescription {
    this.#rows = list.map((entry) => freeze(structuredClone(entry)));
    this.#removed.clear();
    this.#factory.reserve(this.#rows.map(uuidOf));
    return this.#changed({ kind: 'set', count: this.#rows.length });
  }

  /** Adds `n` new coworkers (fresh uuids). */
  add(n: number, at: AddPosition = 'end'): MutationDescription {
    const added: SimulatedEntry[] = [];
    for (let i = 0; i < n; i++) {
      const entry = freeze(this.#factory.fresh());
      this.#insert(entry, at);
      added.push(entry);
    }
    return this.#changed({ kind: 'add', added: this.#placed(added), count: this.#rows.length });
  }

  /** Changes one field (`field`, or a random editable one per entry) of `n` distinct rows. */
  edit(n: number, field?: string): MutationDescription {
    if (field === 'uuid') throw new RangeError('edit cannot change uuid: remove and add instead');
    const indexes = this.#rng.sample(this.#rows.length, Math.min(n, this.#rows.length)).sort((a, b) => a - b);
    const edited = indexes.map((index): FieldEdit => {
      const current = this.#rows[index] as SimulatedEntry;
      const name = field ?? this.#rng.pick(EDITABLE_FIELDS);
      const after = this.#factory.changedValue(current, name);
      const entry = freeze({ ...current, [name]: after });
      this.#rows[index] = entry;
      return { index, uuid: uuidOf(entry), field: name, before: current[name], after, entry };
    });
    return this.#changed({ kind: 'edit', edited, count: this.#rows.length });
  }

  /** Removes `n` coworkers: every appearance of `n` distinct uuids. */
  remove(n: number): MutationDescription {
    const present = [...new Set(this.#rows.map(uuidOf))];
    const uuids = this.#rng
      .sample(present.length, Math.min(n, present.length))
      .map((i) => present[i] as string);
    const chosen = new Set(uuids);
    const removed: PlacedEntry[] = [];
    this.#rows.forEach((entry, index) => {
      if (chosen.has(uuidOf(entry))) removed.push({ index, entry });
    });
    this.#rows = this.#rows.filter((entry) => !chosen.has(uuidOf(entry)));
    for (const uuid of uuids) {
      this.#removed.set(
        uuid,
        removed.filter((placed) => uuidOf(placed.entry) === uuid),
      );
    }
    return this.#changed({ kind: 'remove', removedUuids: uuids, removed, count: this.#rows.length });
  }

  /** Brings a removed coworker back with its old uuid and rows, at its old positions where possible. */
  restore(uuid: string): MutationDescription {
    return this.#restoreAll([uuid]);
  }

  /** Brings back the `n` longest-removed coworkers. */
  returnRemoved(n: number): MutationDescription {
    return this.#restoreAll(this.removedUuids().slice(0, n));
  }

  reorder(): MutationDescription {
    const before = this.#rows.map(uuidOf);
    this.#rng.shuffle(this.#rows);
    return this.#changed({
      kind: 'reorder',
      before,
      after: this.#rows.map(uuidOf),
      count: this.#rows.length,
    });
  }

  /** Adds another appearance of `uuid` whose other fields differ, at a random position. */
  duplicate(uuid: string): MutationDescription {
    const existing = this.#rows.find((entry) => uuidOf(entry) === uuid);
    if (!existing) throw new RangeError(`duplicate: uuid ${uuid} is not in the listing`);
    // Same uuid and name, as the real listing shows; the rest differs.
    const entry = freeze({
      ...existing,
      post: this.#factory.changedValue(existing, 'post'),
      emoji_file: this.#factory.changedValue(existing, 'emoji_file'),
      show_image: this.#rng.chance(0.5),
      images: this.#factory.changedValue(existing, 'images'),
    });
    this.#insert(entry, 'random');
    return this.#changed({ kind: 'duplicate', added: this.#placed([entry]), count: this.#rows.length });
  }

  /** One random, realistic change; the demo calls it on a timer. Deterministic for a given seed. */
  mutateRandomly(): MutationDescription {
    const canRestore = this.#removed.size > 0;
    const kind = this.#rng.weighted([
      ['add', 0.25],
      ['edit', 0.4],
      ['remove', this.#rows.length > 1 ? 0.15 : 0],
      ['restore', canRestore ? 0.1 : 0],
      ['duplicate', this.#rows.length > 0 ? 0.07 : 0],
      ['reorder', 0.03],
    ] as const);
    switch (kind) {
      case 'add':
        return this.add(1 + this.#rng.int(2), this.#rng.pick(['start', 'end', 'random'] as const));
      case 'edit':
        return this.edit(1 + this.#rng.int(3));
      case 'remove':
        return this.remove(1);
      case 'restore':
        return this.returnRemoved(1);
      case 'duplicate':
        return this.duplicate(uuidOf(this.#rng.pick(this.#rows)));
      case 'reorder':
        return this.reorder();
    }
  }

  #restoreAll(uuids: readonly string[]): MutationDescription {
    const rows: PlacedEntry[] = [];
    for (const uuid of uuids) {
      const placed = this.#removed.get(uuid);
      if (!placed) throw new RangeError(`restore: uuid ${uuid} was not removed`);
      rows.push(...placed);
      this.#removed.delete(uuid);
    }
    rows.sort((a, b) => a.index - b.index);
    for (const { index, entry } of rows) this.#rows.splice(Math.min(index, this.#rows.length), 0, entry);
    const restored = this.#placed(rows.map((placed) => placed.entry));
    return this.#changed({ kind: 'restore', restoredUuids: [...uuids], restored, count: this.#rows.length });
  }

  #insert(entry: SimulatedEntry, at: AddPosition): void {
    const index =
      at === 'start' ? 0 : at === 'end' ? this.#rows.length : this.#rng.int(this.#rows.length + 1);
    this.#rows.splice(index, 0, entry);
  }

  // Positions after the change, found by identity (entries are distinct frozen objects).
  #placed(entries: readonly SimulatedEntry[]): PlacedEntry[] {
    const wanted = new Set(entries);
    const placed: PlacedEntry[] = [];
    this.#rows.forEach((entry, index) => {
      if (wanted.has(entry)) placed.push({ index, entry });
    });
    return placed;
  }

  #changed(description: MutationDescription): MutationDescription {
    this.#version++;
    return description;
  }
}
