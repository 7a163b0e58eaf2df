import { describe, expect, it } from 'vitest';
import { changeSubjects } from '../../src/db/page-queries.js';
import { getRun, listChanges } from '../../src/db/queries.js';
import { plainText } from '../../src/notify/message.js';
import { runChangesMessage } from '../../src/notify/run-message.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

describe("a run's message from what the run stored (issue 22)", () => {
  it('names everyone concerned, in the words of the pages, at most 20 then "and N more"', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 7, count: 30 });
    await sync(store, upstream);
    upstream.data.edit(3);
    upstream.data.add(25);
    const { runId } = await sync(store, upstream);
    const run = getRun(store, runId);
    const changes = listChanges(store, { limit: 1000 })
      .filter((c) => c.runId === runId)
      .sort((a, b) => a.id - b.id);
    const ctx = { baseUrl: 'https://mirror.example.com', timeZone: 'UTC' };
    const message = runChangesMessage(
      { id: runId, finishedAt: run?.finishedAt ?? '' },
      changes,
      changeSubjects(store, changes),
      ctx,
    );
    expect(message.title).toBe('Team page: 25 joined, 3 changed');
    expect(message.lines).toHaveLength(20);
    expect(message.more).toEqual({
      count: changes.length - 20,
      url: `https://mirror.example.com/runs/${runId}/`,
    });
    const text = plainText(message);
    for (const change of changes.slice(0, 20)) {
      expect(text).toContain(`https://mirror.example.com/coworkers/${change.uuid}/`);
    }
    expect(message.lines.every((l) => l.who !== '' && !/^[0-9a-z]{32}$/.test(l.who))).toBe(true);
  });
});
