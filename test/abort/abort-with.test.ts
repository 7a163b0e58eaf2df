import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortWith, eitherSignal } from '../../src/abort.js';

describe('abortWith', () => {
  it('aborts the controller with the reason of whichever signal aborts first', () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const joined = new AbortController();
    abortWith(joined, [a.signal, undefined, b.signal]);
    b.abort(new Error('b first'));
    a.abort(new Error('a second'));
    expect(joined.signal.aborted).toBe(true);
    expect((joined.signal.reason as Error).message).toBe('b first');
  });

  it('aborts at once, with its reason, when a signal has already aborted', () => {
    const done = new AbortController();
    done.abort(new Error('before'));
    const joined = new AbortController();
    abortWith(joined, [new AbortController().signal, done.signal]);
    expect((joined.signal.reason as Error).message).toBe('before');
  });

  it('leaves no listener behind once the work is done, and stops following', () => {
    const long = new AbortController();
    for (let i = 0; i < 100; i++) abortWith(new AbortController(), [long.signal])();
    expect(getEventListeners(long.signal, 'abort')).toHaveLength(0);
    const joined = new AbortController();
    abortWith(joined, [long.signal])();
    long.abort();
    expect(joined.signal.aborted).toBe(false);
  });
});

describe('eitherSignal', () => {
  it('is the one signal present, as it is', () => {
    const only = new AbortController().signal;
    expect(eitherSignal(only, undefined)[0]).toBe(only);
    expect(eitherSignal(undefined, only)[0]).toBe(only);
    expect(eitherSignal(undefined, undefined)[0]).toBeUndefined();
  });

  it('follows both when both are present, until told to stop', () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const [either, unfollow] = eitherSignal(a.signal, b.signal);
    a.abort(new Error('a'));
    expect(either?.aborted).toBe(true);
    unfollow();
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
  });
});
