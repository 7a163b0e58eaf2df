import type { MessageLine, NotifyMessage } from '../message.js';
import { plainText } from '../message.js';
import { clipText } from '../describe-change.js';
import { balancedBidi } from '../../text/bidi.js';

/** A request body for one service: what `send.ts` POSTs, and where when it is not the target URL. */
export interface ChatPayload {
  body: string;
  contentType: string;
  /** A URL to POST to in place of the target's (ntfy's JSON publishing posts to the server root). */
  url?: string;
}

const json = (value: unknown): ChatPayload => ({
  body: JSON.stringify(value),
  contentType: 'application/json',
});

/**
 * Cuts `text` to `max` UTF-16 units (the services count characters), marking the cut. A cut inside
 * an isolated field would leave it open over the mark and whatever a service puts after it: what
 * the cut leaves is balanced (`balancedBidi`), its closing characters counted in `max`.
 */
export function fit(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  for (;;) {
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
    const head = balancedBidi(text.slice(0, end));
    if (head.length <= max - 1) return `${head}…`;
    end -= head.length - (max - 1);
  }
}

/** `clipText` to `maxBytes` of UTF-8, balanced as `fit` leaves a cut, its closing characters counted. */
function clipBalanced(text: string, maxBytes: number): string {
  let limit = maxBytes;
  for (;;) {
    const head = balancedBidi(clipText(text, limit).text);
    const bytes = Buffer.byteLength(head);
    if (bytes <= maxBytes) return head;
    limit -= bytes - maxBytes;
  }
}

/** Slack (and Google Chat) markup: `&`, `<` and `>` are control characters; escaped they are text. */
export function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Slack's `<url|text>` link: the URL is ours, the text upstream data. */
function slackLink(text: string, url: string | null): string {
  return url === null ? escapeSlack(text) : `<${url}|${escapeSlack(text).replaceAll('|', '¦')}>`;
}

function slackLine(line: MessageLine): string {
  return `• ${slackLink(line.who, line.whoUrl)}${escapeSlack(line.rest)}`;
}

/** Slack: a header block, a section per sentence (mrkdwn), the footer as context; `text` for notifications. */
export function slackPayload(message: NotifyMessage): ChatPayload {
  const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text: fit(text, 3000) } });
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: fit(message.title, 150), emoji: false } },
    ...(message.summary !== null ? [section(escapeSlack(message.summary))] : []),
    ...message.lines.map((line) => {
      const block = section(slackLine(line));
      return line.imageUrl === null
        ? block
        : { ...block, accessory: { type: 'image', image_url: line.imageUrl, alt_text: fit(line.who, 2000) } };
    }),
    ...(message.more !== null
      ? [
          section(
            `and ${message.more.count} more${message.more.url !== null ? ` (<${message.more.url}|all of them>)` : ''}`,
          ),
        ]
      : []),
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: fit(
            `${message.link !== null ? `${slackLink(message.link.label, message.link.url)} · ` : ''}${escapeSlack(message.footer)}`,
            3000,
          ),
        },
      ],
    },
  ];
  return json({ text: fit(escapeSlack(message.title), 3000), blocks, unfurl_links: false });
}

/** Google Chat: one text message; `<url|text>` links and `&<>` escaped as in Slack. */
export function gchatPayload(message: NotifyMessage): ChatPayload {
  const lines = [
    `*${escapeSlack(message.title)}*`,
    ...(message.summary !== null ? [escapeSlack(message.summary)] : []),
    ...message.lines.map(slackLine),
    ...(message.more !== null
      ? [
          `and ${message.more.count} more${message.more.url !== null ? ` (<${message.more.url}|all of them>)` : ''}`,
        ]
      : []),
    `${message.link !== null ? `${slackLink(message.link.label, message.link.url)} · ` : ''}${escapeSlack(message.footer)}`,
  ];
  return json({ text: fit(lines.join('\n'), 4000) });
}

/** Markdown's control characters (Discord's and Mattermost's): escaped with a backslash they are text. */
export function escapeMarkdown(text: string): string {
  return (
    text
      .replace(/[\\`*_~|>#[\]()<:-]/g, (c) => `\\${c}`)
      // A mention needs the @ right before the name: a zero-width space between keeps it text.
      .replace(/@/g, '@\u200b')
      // A line starting "1." or "- " would turn into a list; newlines inside one sentence are spaces.
      .replace(/[\r\n\u2028\u2029]+/g, ' ')
  );
}

function markdownLine(line: MessageLine): string {
  const who = escapeMarkdown(line.who);
  return `• ${line.whoUrl === null ? who : `[${who}](${line.whoUrl})`}${escapeMarkdown(line.rest)}`;
}

function markdownBody(message: NotifyMessage): string[] {
  return [
    ...(message.summary !== null ? [escapeMarkdown(message.summary)] : []),
    ...message.lines.map(markdownLine),
    ...(message.more !== null
      ? [
          `and ${message.more.count} more${message.more.url !== null ? ` ([all of them](${message.more.url}))` : ''}`,
        ]
      : []),
  ];
}

/** Discord: one embed (title ≤ 256, description ≤ 4096, 6000 in all) and no mention ever parsed. */
export function discordPayload(message: NotifyMessage): ChatPayload {
  const image = message.lines.find((l) => l.imageUrl !== null)?.imageUrl ?? null;
  const description = markdownBody(message).join('\n');
  const embed = {
    title: fit(message.title, 256),
    ...(message.link !== null ? { url: message.link.url } : {}),
    // Discord refuses an empty description: a message of a title alone leaves it out.
    ...(description !== '' ? { description: fit(description, 4096) } : {}),
    color: message.event === 'failures' ? 0xd92d20 : message.event === 'recoveries' ? 0x12b76a : 0x2e90fa,
    footer: { text: fit(message.footer, 1024) },
    ...(image !== null ? { thumbnail: { url: image } } : {}),
  };
  return json({ embeds: [embed], allowed_mentions: { parse: [] } });
}

/** Mattermost: a Slack-compatible incoming webhook taking Markdown in `text`. */
export function mattermostPayload(message: NotifyMessage): ChatPayload {
  const lines = [
    `#### ${escapeMarkdown(message.title)}`,
    ...markdownBody(message),
    `${message.link !== null ? `[${escapeMarkdown(message.link.label)}](${message.link.url}) · ` : ''}${escapeMarkdown(message.footer)}`,
  ];
  return json({ text: fit(lines.join('\n'), 16_000) });
}

/**
 * Microsoft Teams (a Workflows webhook): an Adaptive Card whose sentences are RichTextBlock
 * TextRuns, which render no Markdown at all, so upstream text cannot format or link.
 */
export function teamsPayload(message: NotifyMessage): ChatPayload {
  const run = (text: string, url: string | null = null) => ({
    type: 'TextRun',
    text,
    ...(url !== null ? { selectAction: { type: 'Action.OpenUrl', url } } : {}),
  });
  const rich = (inlines: unknown[]) => ({ type: 'RichTextBlock', inlines });
  const body: unknown[] = [
    rich([{ ...run(message.title), weight: 'Bolder', size: 'Medium' }]),
    ...(message.summary !== null ? [rich([run(message.summary)])] : []),
    ...message.lines.map((l) => {
      const sentence = rich([run('• '), run(l.who, l.whoUrl), run(l.rest)]);
      // A thumbnail sits in a narrow column beside its sentence, as Teams lays out a person.
      return l.imageUrl === null
        ? sentence
        : {
            type: 'ColumnSet',
            columns: [
              {
                type: 'Column',
                width: 'auto',
                items: [{ type: 'Image', url: l.imageUrl, size: 'Small', altText: '' }],
              },
              { type: 'Column', width: 'stretch', verticalContentAlignment: 'Center', items: [sentence] },
            ],
          };
    }),
    ...(message.more !== null ? [rich([run(`and ${message.more.count} more`, message.more.url)])] : []),
    rich([{ ...run(message.footer), isSubtle: true, size: 'Small' }]),
  ];
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body,
    ...(message.link !== null
      ? { actions: [{ type: 'Action.OpenUrl', title: message.link.label, url: message.link.url }] }
      : {}),
  };
  return json({
    type: 'message',
    attachments: [
      { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card },
    ],
  });
}

/** ntfy: plain text (no Markdown), published as JSON to the server root with the topic in the body. */
export function ntfyPayload(message: NotifyMessage, targetUrl: string): ChatPayload {
  const url = new URL(targetUrl);
  const segments = url.pathname.split('/').filter((s) => s !== '');
  const topic = segments.pop() ?? '';
  url.pathname = `/${segments.join('/')}`;
  url.search = '';
  const text = message.summary !== null && message.lines.length === 0 ? message.summary : plainText(message);
  return {
    ...json({
      topic,
      title: fit(message.title, 250),
      // ntfy turns a message past 4096 bytes into an attachment: stay under it.
      message: clipBalanced(text, 4000),
      tags: [
        message.event === 'failures'
          ? 'warning'
          : message.event === 'recoveries'
            ? 'white_check_mark'
            : 'busts_in_silhouette',
      ],
      ...(message.link !== null ? { click: message.link.url } : {}),
    }),
    url: url.toString(),
  };
}
