import { Text, Thumb } from './components.js';
import { clip } from '../format.js';
import { isolatedText } from '../../text/bidi.js';

/** An entry as the "Our team" block shows it: name, post, images (or the emoji). */
export function Card(props: {
  entry: Record<string, unknown>;
  uuid: string;
  link?: boolean;
  headingLevel?: 2 | 3;
}) {
  const { entry } = props;
  const name = typeof entry.name === 'string' ? entry.name : '';
  const post = typeof entry.post === 'string' ? entry.post : '';
  const images: unknown[] = Array.isArray(entry.images) ? entry.images : [];
  const picture: unknown = entry.show_image === false ? null : (images[0] ?? entry.emoji_file ?? null);
  const Heading = props.headingLevel === 2 ? 'h2' : 'h3';
  return (
    <article class="card">
      {picture !== null ? (
        <Thumb
          url={picture}
          alt={`Photo of ${isolatedText(clip(name, 300).text) || props.uuid}`}
          size={192}
        />
      ) : null}
      <Heading>
        {props.link ? (
          <a href={`/coworkers/${props.uuid}/`}>{name ? <Text value={name} max={300} /> : props.uuid}</a>
        ) : name ? (
          <Text value={name} max={300} />
        ) : (
          <code>{props.uuid}</code>
        )}
      </Heading>
      <p class="post">
        <Text value={post} max={300} />
      </p>
    </article>
  );
}

/** A stored body as an object; anything else (never expected) as an empty one. */
export function entryOf(body: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
