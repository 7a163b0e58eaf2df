/**
 * Pairs the appearances of one uuid that no identical state matched: the pairing with the fewest
 * changed fields in all, so an edit is recorded as the fields it changed, whatever order the
 * upstream lists them in. The listing has no key but the uuid: where a deletion and an edit change
 * more fields than another story (the row left differs less from the deleted one), that story is
 * recorded, since nothing in the data tells the two apart (docs/reliability.md has the example).
 */

/** An appearance's top-level fields: name → the value's canonical JSON text. */
export type FieldMap = ReadonlyMap<string, string>;

/**
 * Up to this many candidate pairs (old × new), the pairing is the optimal one (Hungarian method,
 * cubic); a uuid listed a few times, as the contract describes, is always here.
 */
const OPTIMAL_MAX_CELLS = 64 * 64;
/** Past that, one linear pass per field, for appearances of at most this many fields. */
const MAX_FIELD_PASSES = 64;

/**
 * How much tells two appearances apart: each field that differs counts 1 (a field present on one
 * side only included), the name 2. A name is what a person is known by on the team page and
 * changes far less often than a post or an image, so where one appearance changed its post and
 * another its name by the same count, the one that kept its name is the same person.
 */
export function changedFieldCount(a: FieldMap, b: FieldMap): number {
  let changed = 0;
  for (const [field, value] of a) if (b.get(field) !== value) changed += weightOf(field);
  for (const field of b.keys()) if (!a.has(field)) changed += weightOf(field);
  return changed;
}

const weightOf = (field: string): number => (field === 'name' ? 2 : 1);

/**
 * Whether two appearances are plausibly one: they share more than they differ. An old appearance
 * that left while a new one arrived (a different person under the same uuid: another name, post and
 * picture) is a removal and an addition, not an edit of every field.
 */
function plausible(a: FieldMap, b: FieldMap): boolean {
  let total = 0;
  for (const field of a.keys()) total += weightOf(field);
  for (const field of b.keys()) if (!a.has(field)) total += weightOf(field);
  return changedFieldCount(a, b) * 2 < total;
}

/**
 * `[oldIndex, newIndex]` pairs: the pairing with the fewest changed fields in all, ties going to
 * the pairing that keeps the listing order, less the pairs that share less than they differ (see
 * `plausible`). Large groups (one uuid listed thousands of times) are paired in linear passes
 * instead: appearances that differ in one field only, then the rest in listing order.
 */
export function pairByFewestChanges(
  olds: readonly FieldMap[],
  news: readonly FieldMap[],
): [number, number][] {
  if (olds.length === 0 || news.length === 0) return [];
  const pairs =
    olds.length * news.length <= OPTIMAL_MAX_CELLS ? optimalPairs(olds, news) : linearPairs(olds, news);
  return pairs.filter(([i, j]) => plausible(olds[i] ?? new Map(), news[j] ?? new Map()));
}

function optimalPairs(olds: readonly FieldMap[], news: readonly FieldMap[]): [number, number][] {
  // The order term only breaks ties: one field always outweighs any distance in the listing.
  const scale = olds.length + news.length + 1;
  // Each cell once: the method reads cells many times, and an entry may carry thousands of fields.
  const matrix = olds.map((a, i) => news.map((b, j) => changedFieldCount(a, b) * scale + Math.abs(i - j)));
  const cost = (i: number, j: number): number => matrix[i]?.[j] ?? Infinity;
  if (olds.length <= news.length) return hungarian(olds.length, news.length, cost);
  return hungarian(news.length, olds.length, (j, i) => cost(i, j)).map(([j, i]) => [i, j]);
}

/**
 * The Hungarian method (Kuhn–Munkres with potentials) for `rows` ≤ `cols`: every row gets a distinct
 * column, the total cost least. O(rows² · cols).
 */
function hungarian(
  rows: number,
  cols: number,
  cost: (row: number, col: number) => number,
): [number, number][] {
  const u = new Array<number>(rows + 1).fill(0);
  const v = new Array<number>(cols + 1).fill(0);
  // owner[col] = the row (1-based) assigned to col (1-based); 0 = none.
  const owner = new Array<number>(cols + 1).fill(0);
  const way = new Array<number>(cols + 1).fill(0);
  for (let row = 1; row <= rows; row++) {
    owner[0] = row;
    let col0 = 0;
    const minv = new Array<number>(cols + 1).fill(Infinity);
    const used = new Array<boolean>(cols + 1).fill(false);
    do {
      used[col0] = true;
      const row0 = owner[col0] ?? 0;
      let delta = Infinity;
      let col1 = 0;
      for (let col = 1; col <= cols; col++) {
        if (used[col]) continue;
        const reduced = cost(row0 - 1, col - 1) - (u[row0] ?? 0) - (v[col] ?? 0);
        if (reduced < (minv[col] ?? Infinity)) {
          minv[col] = reduced;
          way[col] = col0;
        }
        if ((minv[col] ?? Infinity) < delta) {
          delta = minv[col] ?? Infinity;
          col1 = col;
        }
      }
      for (let col = 0; col <= cols; col++) {
        if (used[col]) {
          const r = owner[col] ?? 0;
          u[r] = (u[r] ?? 0) + delta;
          v[col] = (v[col] ?? 0) - delta;
        } else minv[col] = (minv[col] ?? Infinity) - delta;
      }
      col0 = col1;
    } while ((owner[col0] ?? 0) !== 0);
    do {
      const col1 = way[col0] ?? 0;
      owner[col0] = owner[col1] ?? 0;
      col0 = col1;
    } while (col0 !== 0);
  }
  const pairs: [number, number][] = [];
  for (let col = 1; col <= cols; col++) {
    const row = owner[col] ?? 0;
    if (row !== 0) pairs.push([row - 1, col - 1]);
  }
  return pairs.sort((a, b) => a[0] - b[0]);
}

/**
 * One pass per field: appearances equal in every other field are paired (first unused old one in
 * listing order, as a queue); then what is left, in listing order.
 */
function linearPairs(olds: readonly FieldMap[], news: readonly FieldMap[]): [number, number][] {
  const fields = [...new Set([...olds, ...news].flatMap((m) => [...m.keys()]))].sort();
  // A pass costs every field of every appearance: with many fields, only the order is left.
  const passes = fields.length <= MAX_FIELD_PASSES ? fields : [];
  const oldUsed = new Array<boolean>(olds.length).fill(false);
  const newUsed = new Array<boolean>(news.length).fill(false);
  const pairs: [number, number][] = [];
  for (const skip of passes) {
    if (pairs.length === Math.min(olds.length, news.length)) break;
    const keyOf = (m: FieldMap): string =>
      // Canonical JSON never holds a raw control character, so \u0001 and \u0000 cannot collide.
      fields.map((f) => (f === skip ? '' : (m.get(f) ?? '\u0000'))).join('\u0001');
    const queues = new Map<string, { items: number[]; head: number }>();
    olds.forEach((m, i) => {
      if (oldUsed[i]) return;
      const key = keyOf(m);
      const queue = queues.get(key);
      if (queue) queue.items.push(i);
      else queues.set(key, { items: [i], head: 0 });
    });
    news.forEach((m, j) => {
      if (newUsed[j]) return;
      const queue = queues.get(keyOf(m));
      const i = queue?.items[queue.head];
      if (queue === undefined || i === undefined) return;
      queue.head++;
      oldUsed[i] = true;
      newUsed[j] = true;
      pairs.push([i, j]);
    });
  }
  const restOld = olds.map((_m, i) => i).filter((i) => !oldUsed[i]);
  const restNew = news.map((_m, j) => j).filter((j) => !newUsed[j]);
  for (let k = 0; k < Math.min(restOld.length, restNew.length); k++) {
    pairs.push([restOld[k] ?? 0, restNew[k] ?? 0]);
  }
  return pairs.sort((a, b) => a[0] - b[0]);
}
