import { describe, expect, it } from 'vitest';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

// Regression: the list endpoint's page for a browser wrote NUL, U+001F and DEL raw into a table,
// showed media URLs as text, and was wider than a 1280 px window. It now shows what DRF's browsable
// API shows: the request line, status and headers, the JSON as DRF indents it with its URLs as
// links, and the pager.
describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('the list endpoint in a browser', () => {
    it('request line, status, headers, indented JSON with visible controls and linked URLs, pager', async () => {
      const [row] = generateCoworkers(8, 1);
      if (!row) throw new Error('one coworker was generated');
      const image = 'https://media.example.com/team/a.png';
      const entry = { ...row, name: 'Nul\u0000Unit\u001fDel\u007fNel\u0085Ls\u2028', images: [image] };
      const store = await fresh();
      await sync(store, await simulatedUpstream({ entries: [entry] }));
      const mirror = await startMirror(store);
      const res = await fetch(`${mirror.url}${LIST_PATH}?page=1`, { headers: { Accept: BROWSER } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await res.text();
      // eslint-disable-next-line no-control-regex -- no control character may reach the page raw
      expect(html).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]/);
      expect(html).toContain('<pre><b>GET</b> /api/model/team-block-coworker/list/?page=1</pre>');
      expect(html).toContain(
        '<b>HTTP 200 OK</b>\n<b>Allow:</b> <span class="lit">GET, HEAD, OPTIONS</span>\n' +
          '<b>Content-Type:</b> <span class="lit">application/json</span>\n<b>Vary:</b> <span class="lit">Accept</span>\n\n{\n    &quot;count&quot;: 1,',
      );
      expect(html).toContain(
        '&quot;name&quot;: &quot;Nul\\u0000Unit\\u001fDel\\u007fNel\\u0085Ls\\u2028&quot;',
      );
      expect(html).toContain(`&quot;<a href="${image}" rel="nofollow">${image}</a>&quot;`);
      expect(html).toContain('page 1 of 1');
      expect(html).toContain('white-space:pre-wrap;overflow-wrap:anywhere');
      expect(html).not.toContain('<table');
    });
  });
});
