// What Unicode's bidi algorithm makes of the explicit controls in a text (rules X1–X8, without
// their depth limit), to check that no field's control reaches the words after it.

const NAMES: Record<number, string> = {
  0x202a: 'LRE',
  0x202b: 'RLE',
  0x202c: 'PDF',
  0x202d: 'LRO',
  0x202e: 'RLO',
  0x2066: 'LRI',
  0x2067: 'RLI',
  0x2068: 'FSI',
  0x2069: 'PDI',
};

const isParagraphEnd = (code: number): boolean =>
  code === 0x0a || code === 0x0d || (code >= 0x1c && code <= 0x1e) || code === 0x85 || code === 0x2029;

/** The controls open before each index of `text` (one more entry: at its end), innermost last. */
export function openControls(text: string): string[][] {
  const stack: { name: string; isolate: boolean }[] = [];
  const at: string[][] = [];
  for (let i = 0; i < text.length; i++) {
    at.push(stack.map((s) => s.name));
    const code = text.charCodeAt(i);
    const name = NAMES[code];
    if (isParagraphEnd(code)) stack.length = 0;
    else if (name === 'PDF') {
      if (stack.length > 0 && stack.at(-1)?.isolate === false) stack.pop();
    } else if (name === 'PDI') {
      const isolate = stack.findLastIndex((s) => s.isolate);
      if (isolate >= 0) stack.length = isolate;
    } else if (name !== undefined) stack.push({ name, isolate: name.endsWith('I') });
  }
  at.push(stack.map((s) => s.name));
  return at;
}

/**
 * Where the mirror's own words in `text` sit under a control some field left open: each
 * occurrence of each of `words`, and the end of the text, as `"word" at 12 under RLO`. Empty
 * when every field keeps its controls to itself.
 */
export function bidiLeaks(text: string, words: readonly string[]): string[] {
  const open = openControls(text);
  const leaks: string[] = [];
  for (const word of words) {
    for (let i = text.indexOf(word); i >= 0; i = text.indexOf(word, i + 1)) {
      const under = open[i] ?? [];
      if (under.length > 0) leaks.push(`${JSON.stringify(word)} at ${i} under ${under.join(' ')}`);
    }
  }
  const end = open[text.length] ?? [];
  if (end.length > 0) leaks.push(`the end under ${end.join(' ')}`);
  return leaks;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * An HTML document's text as a browser's bidi algorithm sees it: a `<bdi>` (or an element with
 * `dir="auto"`) is an isolate (FSI…PDI, as Chromium lays it out), any other tag nothing, the
 * entities decoded. Attribute values and the title are apart: see `htmlAttributeTexts`.
 */
export function htmlAsBidiText(html: string): string {
  const body = html.replace(/<title>[^]*?<\/title>/, '').replace(/<(script|style)\b[^]*?<\/\1>/g, '');
  const isolating: boolean[] = [];
  const text = body.replace(
    /<(\/?)([a-zA-Z][\w-]*)([^>]*)>/g,
    (_tag, close: string, name: string, attrs: string) => {
      if (close === '') {
        const isolate = name.toLowerCase() === 'bdi' || /\bdir="auto"/.test(attrs);
        if (!/\/$/.test(attrs) && !VOID.has(name.toLowerCase())) isolating.push(isolate);
        return isolate ? '\u2068' : '';
      }
      return isolating.pop() === true ? '\u2069' : '';
    },
  );
  return decodeEntities(text);
}

const VOID = new Set(['img', 'br', 'meta', 'link', 'input', 'hr', 'source', 'col', 'area', 'base', 'wbr']);

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity.startsWith('#x') || entity.startsWith('#X'))
      return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)));
    return ENTITIES[entity.toLowerCase()] ?? whole;
  });
}

/** Every attribute value and the `<title>` of an HTML document, decoded: each a text of its own. */
export function htmlAttributeTexts(html: string): string[] {
  const values = [...html.matchAll(/\s[\w-]+="([^"]*)"/g)].map((m) => decodeEntities(m[1] ?? ''));
  const title = /<title>([^]*?)<\/title>/.exec(html)?.[1];
  return title === undefined ? values : [...values, decodeEntities(title)];
}

/** Every string in a JSON value (a chat payload), depth first. */
export function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}
