/**
 * `npm run docs:screenshots:notify`: shoots each service's message as the service would show it, in
 * Debian's headless Chromium: the e-mail's own HTML part, and for Slack, Discord, Microsoft Teams
 * and Google Chat an HTML imitation of the service's rendering built from the exact payload the
 * formatter produces (blocks, embed, Adaptive Card, text). Thumbnails come from a loopback stand-in
 * for the mirror's /media. It asserts nothing, so it is no test; commit the images it writes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { ChangeFacts } from '../../src/notify/describe-change.js';
import {
  discordPayload,
  gchatPayload,
  slackPayload,
  teamsPayload,
} from '../../src/notify/formats/chat-formats.js';
import { emailContent } from '../../src/notify/formats/email-format.js';
import { changesMessage, type NotifyMessage } from '../../src/notify/message.js';
import { ROOT } from '../helpers/process.js';
import { chromiumBrowser } from '../helpers/requirements.js';
import { renderDiscord, renderGchat, renderSlack, renderTeams } from './service-imitations.js';

const COLORS = ['#f79009', '#2e90fa', '#12b76a', '#9e77ed', '#ee46bc', '#d92d20'];

/** A stand-in for the mirror's /media: a coloured initial per picture, as SVG. */
async function mediaStandIn(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const n = Number(/(\d+)\.svg$/.exec(req.url ?? '')?.[1] ?? 0);
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96"><rect width="96" height="96" fill="${COLORS[n % COLORS.length] ?? '#999'}"/><circle cx="48" cy="38" r="18" fill="#fff" opacity=".85"/><rect x="18" y="62" width="60" height="34" rx="17" fill="#fff" opacity=".85"/></svg>`;
    res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(svg);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const person = (uuid: string, name: string, post: string, extra: Partial<ChangeFacts> = {}): ChangeFacts => ({
  kind: 'added',
  field: null,
  old: null,
  new: null,
  uuid,
  slot: 0,
  name,
  post,
  ...extra,
});

/** A run of six changes by invented people; the fifth name is hostile markup, shown as text. */
function sampleRun(mediaUrl: string): NotifyMessage {
  const changes = [
    person('0b7c1a52', 'Zoë Dvořák', 'QA engineer'),
    person('1f3e9d20', 'José Álvarez', 'QA lead', {
      kind: 'changed',
      field: 'post',
      old: 'qa engineer',
      new: 'QA lead',
    }),
    person('2a6b4c81', 'Kate', 'Designer', { kind: 'removed' }),
    person('3c8d2e47', 'Amani Njoroge', 'Backend developer'),
    person('4d1f7a93', '<!channel> @everyone <b>Mallory</b>', 'Support'),
    person('5e2a8b16', 'Lin Wei', 'Product manager', { kind: 'returned' }),
  ];
  const index = new Map(changes.map((c, i) => [c, i]));
  return changesMessage(
    {
      runId: 42,
      finishedAt: '2026-11-24T08:10:00Z',
      changes,
      imageOf: (c) => (c.kind === 'removed' ? null : `${mediaUrl}/media/sample/${index.get(c) ?? 0}.svg`),
    },
    { baseUrl: 'https://mirror.example.com', timeZone: 'Europe/Paris' },
  );
}

const executablePath = chromiumBrowser().found;
if (executablePath === null) throw new Error(`no Chromium: ${chromiumBrowser().install}`);
const media = await mediaStandIn();
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  const message = sampleRun(media.url);
  const shots: [string, string, number][] = [
    ['notify-email.png', emailContent(message).html, 720],
    ['notify-slack.png', renderSlack(slackPayload(message).body), 720],
    ['notify-discord.png', renderDiscord(discordPayload(message).body), 720],
    ['notify-teams.png', renderTeams(teamsPayload(message).body), 640],
    ['notify-gchat.png', renderGchat(gchatPayload(message).body), 720],
  ];
  for (const [file, html, width] of shots) {
    const context = await browser.newContext({ viewport: { width, height: 400 }, locale: 'en-GB' });
    const page = await context.newPage();
    await page.setContent(html, { waitUntil: 'load' });
    const path = join(ROOT, 'docs', file);
    await page.screenshot({ path, fullPage: true });
    await context.close();
    console.log(`wrote ${path}`);
  }
} finally {
  await browser.close();
  await media.close();
}
