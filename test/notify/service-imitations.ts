/**
 * HTML imitations of how Slack, Discord, Teams and Google Chat show a message, read from the exact
 * request body the formatter produces: for the docs' screenshots only. Everything from the payload
 * is HTML-escaped here, so what shows is what the service would show.
 */
type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (v !== null && typeof v === 'object' ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const html = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** Slack and Google Chat text: `<url|text>` links, `*bold*`, and `&amp; &lt; &gt;` as characters. */
function mrkdwn(text: string, bold = false): string {
  const plain = (t: string) => {
    const decoded = t.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
    const escaped = html(decoded);
    return bold ? escaped.replace(/\*([^*\n]+)\*/g, '<b>$1</b>') : escaped;
  };
  let out = '';
  let last = 0;
  for (const m of text.matchAll(/<([^|>]+)\|([^>]*)>/g)) {
    out += plain(text.slice(last, m.index));
    out += `<a href="${html(m[1] ?? '')}">${plain(m[2] ?? '')}</a>`;
    last = m.index + m[0].length;
  }
  return (out + plain(text.slice(last))).replaceAll('\n', '<br>');
}

/** Discord Markdown: `[text](url)` links and backslash escapes. */
function markdown(text: string): string {
  const plain = (t: string) => html(t.replace(/\\(.)/g, '$1'));
  let out = '';
  let last = 0;
  for (const m of text.matchAll(/\[((?:\\.|[^\]\\])*)\]\(([^)\s]+)\)/g)) {
    out += plain(text.slice(last, m.index));
    out += `<a href="${html(m[2] ?? '')}">${plain(m[1] ?? '')}</a>`;
    last = m.index + m[0].length;
  }
  return (out + plain(text.slice(last))).replaceAll('\n', '<br>');
}

const page = (css: string, body: string) =>
  `<!doctype html><meta charset="utf-8"><style>${css}</style><body>${body}</body>`;

const AVATAR = '<div class="avatar">CM</div>';

export function renderSlack(body: string): string {
  const blocks = arr(obj(JSON.parse(body)).blocks).map(obj);
  const parts = blocks.map((b) => {
    const text = obj(b.text);
    if (b.type === 'header') return `<div class="header">${html(str(text.text))}</div>`;
    if (b.type === 'context')
      return `<div class="context">${arr(b.elements)
        .map((e) => mrkdwn(str(obj(e).text)))
        .join(' ')}</div>`;
    const accessory = obj(b.accessory);
    const image = accessory.type === 'image' ? `<img src="${html(str(accessory.image_url))}" alt="">` : '';
    return `<div class="section"><div>${mrkdwn(str(text.text))}</div>${image}</div>`;
  });
  return page(
    `body{font:15px/1.46 Lato,"Helvetica Neue",Arial,sans-serif;color:#1d1c1d;margin:0;padding:16px 20px;background:#fff}
     .msg{display:flex;gap:8px}.avatar{width:36px;height:36px;border-radius:6px;background:#4a154b;color:#fff;font:700 13px/36px sans-serif;text-align:center;flex:none}
     .name{font-weight:900}.app{font-size:10px;background:#e8e8e8;color:#616061;padding:1px 3px;border-radius:2px;margin-left:4px}.time{color:#616061;font-size:12px;margin-left:6px}
     .header{font-size:18px;font-weight:900;margin:4px 0 8px}.section{display:flex;justify-content:space-between;align-items:center;gap:12px;margin:4px 0;max-width:560px}
     .section img{width:40px;height:40px;border-radius:6px}.context{color:#616061;font-size:12px;margin-top:8px}a{color:#1264a3;text-decoration:none}`,
    `<div class="msg">${AVATAR}<div><span class="name">Coworker mirror</span><span class="app">APP</span><span class="time">09:10</span>${parts.join('')}</div></div>`,
  );
}

export function renderDiscord(body: string): string {
  const embed = obj(arr(obj(JSON.parse(body)).embeds)[0]);
  const color = `#${Number(embed.color ?? 0)
    .toString(16)
    .padStart(6, '0')}`;
  const thumbnail = str(obj(embed.thumbnail).url);
  const title = html(str(embed.title));
  const url = str(embed.url);
  return page(
    `body{font:16px/1.375 "gg sans","Noto Sans","Helvetica Neue",Arial,sans-serif;color:#dbdee1;margin:0;padding:16px 20px;background:#313338}
     .msg{display:flex;gap:16px}.avatar{width:40px;height:40px;border-radius:50%;background:#5865f2;color:#fff;font:700 13px/40px sans-serif;text-align:center;flex:none}
     .name{color:#f2f3f5;font-weight:500}.bot{font-size:10px;background:#5865f2;color:#fff;padding:1px 4px;border-radius:3px;margin-left:4px;vertical-align:2px}.time{color:#949ba4;font-size:12px;margin-left:6px}
     .embed{display:flex;gap:16px;background:#2b2d31;border-left:4px solid ${color};border-radius:4px;padding:8px 16px 16px 12px;margin-top:4px;max-width:520px}
     .title{font-weight:600;margin:8px 0}.title a{color:#00a8fc}.desc{font-size:14px}.desc a{color:#00a8fc;text-decoration:none}.footer{font-size:12px;color:#b5bac1;margin-top:8px}
     .thumb{width:80px;height:80px;border-radius:4px;margin-top:8px;flex:none}`,
    `<div class="msg">${AVATAR.replace('avatar', 'avatar')}<div><span class="name">Coworker mirror</span><span class="bot">APP</span><span class="time">Today at 09:10</span>
      <div class="embed"><div><div class="title">${url ? `<a href="${html(url)}">${title}</a>` : title}</div>
      <div class="desc">${markdown(str(embed.description))}</div><div class="footer">${html(str(obj(embed.footer).text))}</div></div>
      ${thumbnail ? `<img class="thumb" src="${html(thumbnail)}" alt="">` : ''}</div></div></div>`,
  );
}

function teamsElement(element: Json): string {
  if (element.type === 'RichTextBlock') {
    const runs = arr(element.inlines).map(obj);
    return `<p>${runs
      .map((r) => {
        const style = `${r.weight === 'Bolder' ? 'font-weight:700;' : ''}${r.size === 'Medium' ? 'font-size:17px;' : ''}${r.size === 'Small' ? 'font-size:12px;' : ''}${r.isSubtle === true ? 'color:#616161;' : ''}`;
        const url = str(obj(r.selectAction).url);
        const text = html(str(r.text));
        return url
          ? `<a style="${style}" href="${html(url)}">${text}</a>`
          : `<span style="${style}">${text}</span>`;
      })
      .join('')}</p>`;
  }
  if (element.type === 'ColumnSet') {
    const columns = arr(element.columns).map(obj);
    return `<div class="columns">${columns
      .map(
        (c) =>
          `<div class="${c.width === 'auto' ? 'auto' : 'stretch'}">${arr(c.items)
            .map((i) => teamsElement(obj(i)))
            .join('')}</div>`,
      )
      .join('')}</div>`;
  }
  if (element.type === 'Image') return `<img class="image" src="${html(str(element.url))}" alt="">`;
  return '';
}

export function renderTeams(body: string): string {
  const card = obj(obj(arr(obj(JSON.parse(body)).attachments)[0]).content);
  const actions = arr(card.actions).map(obj);
  return page(
    `body{font:14px/1.43 "Segoe UI",system-ui,"Helvetica Neue",Arial,sans-serif;color:#242424;margin:0;padding:16px 20px;background:#f5f5f5}
     .msg{display:flex;gap:10px}.avatar{width:32px;height:32px;border-radius:50%;background:#5b5fc7;color:#fff;font:600 12px/32px sans-serif;text-align:center;flex:none}
     .meta{font-size:12px;color:#616161;margin-bottom:4px}.meta b{color:#242424}.card{background:#fff;border-radius:6px;box-shadow:0 1px 2px rgba(0,0,0,.14);padding:12px 16px;max-width:480px}
     p{margin:6px 0}a{color:#5b5fc7;text-decoration:none}.columns{display:flex;align-items:center;gap:10px}.auto{flex:none}.stretch{flex:1}.image{width:32px;height:32px;border-radius:4px;display:block}
     .action{display:block;text-align:center;border:1px solid #d1d1d1;border-radius:4px;padding:6px;margin-top:10px;color:#242424;font-weight:600}`,
    `<div class="msg">${AVATAR}<div><div class="meta"><b>Workflows</b> 09:10</div><div class="card">${arr(
      card.body,
    )
      .map((e) => teamsElement(obj(e)))
      .join(
        '',
      )}${actions.map((a) => `<a class="action" href="${html(str(a.url))}">${html(str(a.title))}</a>`).join('')}</div></div></div>`,
  );
}

export function renderGchat(body: string): string {
  const text = str(obj(JSON.parse(body)).text);
  return page(
    `body{font:14px/1.43 "Google Sans",Roboto,Arial,sans-serif;color:#1f1f1f;margin:0;padding:16px 20px;background:#fff}
     .msg{display:flex;gap:12px}.avatar{width:32px;height:32px;border-radius:50%;background:#0b57d0;color:#fff;font:500 12px/32px sans-serif;text-align:center;flex:none}
     .name{font-weight:500}.app{font-size:11px;color:#444746;border:1px solid #c4c7c5;border-radius:4px;padding:0 4px;margin-left:6px}.time{color:#444746;font-size:12px;margin-left:6px}
     .text{max-width:600px;margin-top:2px}a{color:#0b57d0}`,
    `<div class="msg">${AVATAR}<div><span class="name">Coworker mirror</span><span class="app">App</span><span class="time">09:10</span><div class="text">${mrkdwn(text, true)}</div></div></div>`,
  );
}
