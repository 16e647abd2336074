import { CoalescedVersionReads } from './coalesced-version-reads.js';

/** A read function whose queries answer only when the test says so, recording what each asked for. */
function controlledReads() {
  const queries: Array<{ userIds: readonly string[]; answer: (versions: Record<string, string>) => void; fail: (error: Error) => void }> = [];
  const reads = new CoalescedVersionReads(
    (userIds) =>
      new Promise<string[]>((resolve, reject) => {
        queries.push({ userIds, answer: (versions) => resolve(userIds.map((id) => versions[id] ?? '0')), fail: reject });
      }),
  );
  return { reads, queries };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('CoalescedVersionReads', () => {
  it('sends the reads asked at once in one query, each answered with its own user', async () => {
    const { reads, queries } = controlledReads();
    const asked = [reads.version('a'), reads.version('b'), reads.version('a')];
    await until(() => queries.length === 1);
    expect(queries[0].userIds).toEqual(['a', 'b', 'a']);
    queries[0].answer({ a: '7', b: '9' });
    expect(await Promise.all(asked)).toEqual(['7', '9', '7']);
  });

  it('answers a read asked while a query is in flight with a later query, never the one already sent', async () => {
    const { reads, queries } = controlledReads();
    const first = reads.version('a');
    await until(() => queries.length === 1);
    const second = reads.version('a');
    const third = reads.version('c');
    // The first query has not answered: the reads asked since wait, and none is sent before it answers.
    await new Promise((resolve) => setImmediate(resolve));
    expect(queries).toHaveLength(1);
    queries[0].answer({ a: '1' });
    expect(await first).toBe('1');
    await until(() => queries.length === 2);
    expect(queries[1].userIds).toEqual(['a', 'c']);
    queries[1].answer({ a: '2', c: '5' });
    expect(await Promise.all([second, third])).toEqual(['2', '5']);
  });

  it('fails the reads of a failed query and serves the next ones', async () => {
    const { reads, queries } = controlledReads();
    const failed = reads.version('a');
    await until(() => queries.length === 1);
    queries[0].fail(new Error('database unavailable'));
    await expect(failed).rejects.toThrow('database unavailable');
    const next = reads.version('a');
    await until(() => queries.length === 2);
    queries[1].answer({ a: '3' });
    expect(await next).toBe('3');
  });
});
