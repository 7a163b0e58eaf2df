import { createHash } from 'node:crypto';

/**
 * The pages' only static files, kept as module text so `dist/` needs no copy step and the pages
 * work offline. Each is served under a name carrying its hash, so it can be cached for a year.
 */

const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1b1f;--muted:#54545c;--line:#d4d4da;--card:#f6f6f8;
--accent:#0b57d0;--warn-bg:#fff4ce;--warn-fg:#5c3c00;--bad-bg:#fde7e9;--bad-fg:#8a1020;--old:#fde7e9;--new:#ddf4e4;
--ok:#0f6b2f}
@media (prefers-color-scheme:dark){:root{--bg:#141418;--fg:#ececf1;--muted:#b4b4bd;--line:#3a3a44;--card:#1f1f26;
--accent:#8ab4f8;--warn-bg:#3d3000;--warn-fg:#ffe08a;--bad-bg:#4a1219;--bad-fg:#ffb3bd;--old:#4a1219;--new:#12391f;
--ok:#7ddc9b}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
a{color:var(--accent)}
header.site{border-bottom:1px solid var(--line);padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;
align-items:baseline}
header.site .brand{font-weight:700;color:var(--fg);text-decoration:none}
header.site nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
header.site nav a[aria-current]{font-weight:700;color:var(--fg)}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.25rem;margin:1.5rem 0 .5rem}
h3{font-size:1.05rem;margin:1rem 0 .25rem}
.muted{color:var(--muted)}
.notice{padding:.6rem .8rem;border-radius:.4rem;margin:.5rem 0}
.notice.warn{background:var(--warn-bg);color:var(--warn-fg)}
.notice.bad{background:var(--bad-bg);color:var(--bad-fg)}
.notice p{margin:0}.notice ul{margin:.3rem 0 0;padding-left:1.2rem;overflow-wrap:anywhere}.notice a{color:inherit}
.ok{color:var(--ok)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0;overflow-wrap:anywhere}
@media (max-width:40rem){dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.4rem}}
ol.changes,ul.plain{list-style:none;margin:0;padding:0}
ol.changes>li{border-bottom:1px solid var(--line);padding:.5rem 0;overflow-wrap:anywhere}
.diff del{background:var(--old);color:var(--fg);text-decoration:line-through}
.diff ins{background:var(--new);color:var(--fg);text-decoration:none}
.diff del,.diff ins{padding:0 .2rem;border-radius:.2rem}
.thumbs{display:inline-flex;gap:.3rem;vertical-align:middle;flex-wrap:wrap}
.thumbs img,.thumb img{width:48px;height:48px;object-fit:cover;border-radius:.3rem;border:1px solid var(--line)}
.thumb{display:inline-flex;flex-direction:column;align-items:center;gap:.1rem;max-width:7rem;vertical-align:top}
.thumb-name{font-size:.75rem;line-height:1.2;color:var(--muted);overflow-wrap:anywhere;text-align:center}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end;margin:0 0 1rem;padding:.75rem;
background:var(--card);border-radius:.4rem}
form.filters label{display:flex;flex-direction:column;font-size:.9rem;gap:.15rem}
input,select,button{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--muted);
border-radius:.3rem;padding:.3rem .5rem;min-height:2.2rem}
button{cursor:pointer}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:1rem;list-style:none;margin:0;padding:0}
.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.75rem;overflow-wrap:anywhere}
.card img{width:100%;max-width:12rem;aspect-ratio:1;object-fit:cover;border-radius:.3rem}
.card .post{color:var(--muted);margin:0}
.card h3{margin:.25rem 0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
.table-wrap{overflow-x:auto}
nav.pager{display:flex;gap:1rem;margin:1rem 0}
.day{margin-top:1.5rem}
.run-head{font-weight:600;margin:.75rem 0 .25rem}
footer.site{max-width:72rem;margin:0 auto;padding:1rem;font-size:.9rem}
`;

const LOCAL_TIME = `
// Every time on a page is in the mirror's one zone (TZ), which the page names; a reader elsewhere
// gets their own clock's reading as the tooltip, never a second zone in the text.
(function () {
  var format = new Intl.DateTimeFormat(undefined, {
    year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short'
  });
  document.querySelectorAll('time[datetime*="T"]').forEach(function (el) {
    var at = new Date(el.getAttribute('datetime'));
    if (isNaN(at.getTime())) return;
    el.title = format.format(at);
  });
})();
`;

// A page without an icon makes the browser ask for /favicon.ico, which is the DRF site's (a 404).
const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#0b57d0"/></svg>';

export interface Asset {
  path: string;
  contentType: string;
  body: Buffer;
}

function asset(name: string, ext: string, contentType: string, text: string): Asset {
  const body = Buffer.from(text.trim() + '\n');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/api/mirror/static/${name}.${hash}.${ext}`, contentType, body };
}

export const styleAsset = asset('style', 'css', 'text/css; charset=utf-8', STYLE);
export const scriptAsset = asset('local-time', 'js', 'text/javascript; charset=utf-8', LOCAL_TIME);
export const iconAsset = asset('icon', 'svg', 'image/svg+xml', ICON);
export const assets: readonly Asset[] = [styleAsset, scriptAsset, iconAsset];
