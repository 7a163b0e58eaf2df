import type { Coworker } from '../upstream/contract.js';
import { mediaUrl, slugify } from './media-url.js';
import { deriveSeed, Rng } from './prng.js';

export const DEFAULT_MEDIA_BASE_URL = 'http://127.0.0.1:8766/media/';
export const DEFAULT_DUP_RATE = 0.15;

export interface GenerateOptions {
  /** Share of rows that are another appearance of an earlier uuid with differing fields. */
  dupRate?: number;
  mediaBaseUrl?: string;
}

/** Fields a mutation may change; `emoji_file_webm` only when asked for by name (it is always null). */
export const EDITABLE_FIELDS = ['name', 'post', 'emoji_file', 'show_image', 'images'] as const;
export type EditableField = (typeof EDITABLE_FIELDS)[number];

// Invented people: pools mixed at random, with the awkward cases the contract allows.
const FIRST_NAMES = [
  'Mila',
  'Zoë',
  'José',
  'Łukasz',
  'Seán',
  'Kenji',
  'Pavel',
  'Ingrid',
  'Noah',
  'Sofia',
  'Chen',
  'Oliver',
  'Ivan',
  'Amélie',
  'Søren',
  'Ayşe',
  'Björn',
  'Priya',
  'Zoltán',
  'Mei',
  'Nnamdi',
  'Małgorzata',
  'Renée',
  'Jürgen',
  'Aoife',
  'Kate 🌸',
  'Dmitri "Dima"',
  'Tomás',
  'Şebnem',
  'Ewa',
] as const;
const LAST_NAMES = [
  'Dubois',
  'Ivanova',
  'Haddad',
  'Álvarez',
  'Rossi',
  'Kuznetsova',
  "O'Brien",
  'Tanaka',
  'Lindqvist',
  'Nguyen',
  'Wiśniewski',
  'Kowalski',
  'Müller',
  'García',
  'Novák',
  'Dvořák',
  'Petrović',
  'Okafor',
  "D'Angelo",
  'Łęcka',
] as const;
const WHOLE_NAMES = ['王雨桐', '佐藤 美咲', '김서연', 'Ана Јовић', 'محمد سالم'] as const;
const POSTS = [
  'QA Engineer',
  'qa engineer',
  'HEAD OF DESIGN',
  'Head of "Fun"',
  '',
  'Backend developer',
  'Frontend Developer',
  'Frontend developer',
  'Illustrator / 3D artist',
  'iOS developer',
  'Project manager',
  'project manager',
  'Copywriter',
  'Motion designer',
  'DevOps engineer',
  'HR manager',
  'Product Owner',
  'CTO',
  'Team lead, Android',
  'Développeuse senior',
  "Chief 'vibes' officer",
] as const;
const IMAGE_EXTENSIONS = ['png', 'jpg', 'webp', 'JPG'] as const;
const UUID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SUFFIX_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Makes coworkers from one random stream. The data layer keeps one per listing so entries added by
 * later mutations never reuse a uuid.
 */
export class CoworkerFactory {
  readonly #rng: Rng;
  readonly #mediaBaseUrl: string;
  readonly #usedUuids = new Set<string>();

  constructor(rng: Rng, mediaBaseUrl: string = DEFAULT_MEDIA_BASE_URL) {
    this.#rng = rng;
    this.#mediaBaseUrl = mediaBaseUrl;
  }

  /** Marks uuids as taken (entries supplied from outside). */
  reserve(uuids: Iterable<string>): void {
    for (const uuid of uuids) this.#usedUuids.add(uuid);
  }

  fresh(): Coworker {
    const name = this.name();
    return this.#withDetails(this.uuid(), name);
  }

  /** Another appearance of the same coworker: same uuid and name, other fields differ. */
  variant(of: Coworker): Coworker {
    const before = JSON.stringify(of);
    for (let attempt = 0; attempt < 20; attempt++) {
      const candidate = this.#withDetails(of.uuid, of.name);
      if (JSON.stringify(candidate) !== before) return candidate;
    }
    return { ...of, show_image: !of.show_image };
  }

  /** A value for `field` that differs from the entry's current one. */
  changedValue(entry: Readonly<Record<string, unknown>>, field: string): unknown {
    const current = JSON.stringify(entry[field]);
    for (let attempt = 0; attempt < 50; attempt++) {
      const value = this.#valueFor(field, typeof entry.name === 'string' ? entry.name : this.name());
      if (JSON.stringify(value) !== current) return value;
    }
    throw new RangeError(`no different value found for field ${field}`);
  }

  uuid(): string {
    let uuid: string;
    do uuid = this.#rng.token(32, UUID_ALPHABET);
    while (this.#usedUuids.has(uuid));
    this.#usedUuids.add(uuid);
    return uuid;
  }

  name(): string {
    const rng = this.#rng;
    const kind = rng.weighted([
      ['full', 0.68],
      ['first', 0.25],
      ['whole', 0.07],
    ] as const);
    if (kind === 'whole') return rng.pick(WHOLE_NAMES);
    const first = rng.pick(FIRST_NAMES);
    return kind === 'first' ? first : `${first} ${rng.pick(LAST_NAMES)}`;
  }

  #valueFor(field: string, name: string): unknown {
    switch (field) {
      case 'name':
        return this.name();
      case 'post':
        return this.#rng.pick(POSTS);
      case 'emoji_file':
        return this.#emojiFile(name);
      case 'emoji_file_webm':
        return mediaUrl(this.#mediaBaseUrl, `team/emoji/${this.#fileStem(name)}.webm`);
      case 'show_image':
        return this.#rng.chance(0.5);
      case 'images':
        return this.#images(name);
      default:
        throw new RangeError(`unknown coworker field ${field}`);
    }
  }

  // Field order is the serializer's: uuid, name, post, emoji_file, emoji_file_webm, show_image, images.
  #withDetails(uuid: string, name: string): Coworker {
    return {
      uuid,
      name,
      post: this.#rng.pick(POSTS),
      emoji_file: this.#emojiFile(name),
      emoji_file_webm: null,
      show_image: this.#rng.chance(0.5),
      images: this.#images(name),
    };
  }

  #emojiFile(name: string): string | null {
    const kind = this.#rng.weighted([
      ['png', 0.4],
      ['mp4', 0.3],
      [null, 0.3],
    ] as const);
    return kind === null ? null : mediaUrl(this.#mediaBaseUrl, `team/emoji/${this.#fileStem(name)}.${kind}`);
  }

  #images(name: string): string[] {
    const count = this.#rng.weighted([
      [0, 0.3],
      [1, 0.45],
      [2, 0.25],
    ] as const);
    const images: string[] = [];
    for (let i = 1; i <= count; i++)
      images.push(mediaUrl(this.#mediaBaseUrl, `team/images/${this.#imageName(name, i)}`));
    return images;
  }

  // Uploaded names look like Django's: a slug, the raw name, or a slug with the 7-char clash suffix.
  #fileStem(name: string): string {
    const slug = slugify(name) || 'coworker';
    const roll = this.#rng.next();
    if (roll < 0.45) return slug;
    if (roll < 0.65) return name;
    return `${slug}_${this.#rng.token(7, SUFFIX_ALPHABET)}`;
  }

  #imageName(name: string, index: number): string {
    const rng = this.#rng;
    const ext = rng.pick(IMAGE_EXTENSIONS);
    const roll = rng.next();
    if (roll < 0.55) return `${slugify(name) || 'coworker'}_${index}.${ext}`;
    if (roll < 0.9) return `${name} photo ${index}.${ext}`;
    return `IMG_${1000 + rng.int(9000)}.jpg`;
  }
}

/** The seeded listing: same seed, count and options give the same rows in the same order. */
export function generateCoworkers(seed: number, count: number, options: GenerateOptions = {}): Coworker[] {
  const rng = new Rng(deriveSeed(seed, 'generate'));
  const factory = new CoworkerFactory(rng, options.mediaBaseUrl);
  const dupRate = options.dupRate ?? DEFAULT_DUP_RATE;
  const rows: Coworker[] = [];
  for (let i = 0; i < count; i++) {
    const earlier = rows.length > 0 && rng.chance(dupRate) ? rng.pick(rows) : undefined;
    rows.push(earlier ? factory.variant(earlier) : factory.fresh());
  }
  return rows;
}
