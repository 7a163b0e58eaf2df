import nodemailer from 'nodemailer';
import { request, type Dispatcher } from 'undici';
import { USER_AGENT } from '../version.js';
import {
  discordPayload,
  gchatPayload,
  mattermostPayload,
  ntfyPayload,
  slackPayload,
  teamsPayload,
  type ChatPayload,
} from './formats/chat-formats.js';
import { emailContent } from './formats/email-format.js';
import type { NotifyMessage } from './message.js';
import { answerExcerpt } from '../outbox/answer-excerpt.js';
import { retryAfterMs } from '../outbox/retry-after.js';
import type { ChatTarget, EmailTarget, NotifyTarget } from './targets.js';

/** At most this much of an answer is read, to say what the service answered. */
const EXCERPT_BYTES = 512;

/**
 * What one delivery attempt came to: `ok`; `retry` (5xx, 429, network, timeout; after
 * `retryAfterMs` when the service said so); `refused` (the service says the target no longer
 * exists or is not ours: disable it); `failed` (our request was refused: retrying would not help).
 */
export interface SendOutcome {
  status: 'ok' | 'retry' | 'refused' | 'failed';
  httpStatus: number | null;
  retryAfterMs: number | null;
  /** What the service answered, for a person: "answered 404: no_service". Never the target URL. */
  detail: string;
  durationMs: number;
}

export interface SendOptions {
  timeoutMs: number;
  dispatcher?: Dispatcher;
  now?: () => number;
}

/** The request body of one message for one chat service. */
export function chatPayload(message: NotifyMessage, target: ChatTarget): ChatPayload {
  switch (target.kind) {
    case 'slack':
      return slackPayload(message);
    case 'discord':
      return discordPayload(message);
    case 'teams':
      return teamsPayload(message);
    case 'gchat':
      return gchatPayload(message);
    case 'mattermost':
      return mattermostPayload(message);
    case 'ntfy':
      return ntfyPayload(message, target.url);
  }
}

/** Delivers one message to one target, once: the caller owns retries, through the outcome. */
export function sendMessage(
  message: NotifyMessage,
  target: NotifyTarget,
  options: SendOptions,
): Promise<SendOutcome> {
  return target.kind === 'email' ? sendEmail(message, target, options) : sendChat(message, target, options);
}

/** 401/403/404/410: the webhook was deleted, revoked or never existed. */
const PERMANENT = new Set([401, 403, 404, 410]);

export function classifyStatus(status: number): SendOutcome['status'] {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 429 || status === 408 || status >= 500) return 'retry';
  return PERMANENT.has(status) ? 'refused' : 'failed';
}

/** What a service answered, as one line: control characters out. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  return (
    (await answerExcerpt(body, EXCERPT_BYTES))
      // eslint-disable-next-line no-control-regex -- control characters are what is removed
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .trim()
  );
}

async function sendChat(
  message: NotifyMessage,
  target: ChatTarget,
  options: SendOptions,
): Promise<SendOutcome> {
  const now = options.now ?? Date.now;
  const started = now();
  const payload = chatPayload(message, target);
  try {
    const response = await request(payload.url ?? target.url, {
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
      method: 'POST',
      headers: { 'content-type': payload.contentType, 'user-agent': USER_AGENT },
      body: payload.body,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const excerpt = await readExcerpt(response.body);
    const status = classifyStatus(response.statusCode);
    return {
      status,
      httpStatus: response.statusCode,
      retryAfterMs: status === 'retry' ? retryAfterMs(response.headers['retry-after'], now()) : null,
      detail: `answered ${response.statusCode}${excerpt !== '' ? `: ${excerpt.slice(0, 200)}` : ''}`,
      durationMs: now() - started,
    };
  } catch (thrown) {
    return {
      status: 'retry',
      httpStatus: null,
      retryAfterMs: null,
      detail: networkDetail(thrown, options),
      durationMs: now() - started,
    };
  }
}

function networkDetail(thrown: unknown, options: SendOptions): string {
  const error = thrown as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  if (error.name === 'TimeoutError') return `no answer within ${options.timeoutMs} ms (NOTIFY_TIMEOUT)`;
  const code = error.code ?? error.cause?.code ?? 'error';
  // undici's and Node's messages name the host and port at most, never the path.
  return code === 'ECONNREFUSED' ? 'connection refused' : `${code}: ${error.message}`;
}

async function sendEmail(
  message: NotifyMessage,
  target: EmailTarget,
  options: SendOptions,
): Promise<SendOutcome> {
  const now = options.now ?? Date.now;
  const started = now();
  const transport = nodemailer.createTransport({
    host: target.host,
    port: target.port,
    secure: target.secure,
    ...(target.user !== null ? { auth: { user: target.user, pass: target.password ?? '' } } : {}),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  const content = emailContent(message);
  try {
    const info = await transport.sendMail({ from: target.from, to: target.to, ...content });
    return {
      status: 'ok',
      httpStatus: null,
      retryAfterMs: null,
      detail: `accepted: ${info.response}`,
      durationMs: now() - started,
    };
  } catch (thrown) {
    const error = thrown as Error & { responseCode?: number; code?: string; response?: string };
    const code = error.responseCode;
    // SMTP 4xx is temporary by definition; 5xx is a refusal of this mail (a bad address, no auth).
    const status = code !== undefined && code >= 500 ? 'failed' : 'retry';
    const detail =
      code !== undefined
        ? `answered ${error.response ?? code}`
        : `${error.code ?? 'error'}: ${error.message}`;
    return { status, httpStatus: null, retryAfterMs: null, detail, durationMs: now() - started };
  } finally {
    transport.close();
  }
}
