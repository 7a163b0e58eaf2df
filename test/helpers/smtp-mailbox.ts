import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { onTestFinished } from 'vitest';

export interface Mailbox {
  port: number;
  mails: ParsedMail[];
  envelopes: { from: string; to: string[]; user: string | undefined }[];
}

/** A real SMTP server on loopback (smtp-server) that takes `user`/`pw` and parses what it receives. */
export async function mailbox(options: { refuseWith?: number } = {}): Promise<Mailbox> {
  const box: Mailbox = { port: 0, mails: [], envelopes: [] };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'user' && auth.password === 'p,w') callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          box.mails.push(mail);
          box.envelopes.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            user: typeof session.user === 'string' ? session.user : undefined,
          });
          if (options.refuseWith !== undefined) {
            callback(Object.assign(new Error('mailbox unavailable'), { responseCode: options.refuseWith }));
          } else callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  box.port = (server.server.address() as AddressInfo).port;
  return box;
}
