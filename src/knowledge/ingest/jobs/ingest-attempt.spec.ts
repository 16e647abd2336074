import { jest } from '@jest/globals';
import { progressReporter } from './ingest-attempt.js';

describe('progressReporter', () => {
  const setup = () => {
    const reportProgress = jest.fn(async () => undefined);
    const recordRow = jest.fn(async () => true);
    return { reportProgress, recordRow, report: progressReporter({ id: 'job-1', reportProgress }, recordRow) };
  };

  it('writes the job’s row when a stage starts', async () => {
    const { recordRow, reportProgress, report } = setup();
    await report('parsing', 0, 1);
    expect(recordRow).toHaveBeenCalledWith('parsing', 0, 1);
    expect(reportProgress).toHaveBeenCalledWith({ stage: 'parsing', done: 0, total: 1 });
  });

  it('never writes the row from inside the document’s transaction (the embedded database would hold that write until the transaction ends); the queue event still goes', async () => {
    const { recordRow, reportProgress, report } = setup();
    jest.useFakeTimers({ now: 0 });
    try {
      await report('storing', 0, 10);
      recordRow.mockClear();
      // Long past the interval at which the row is written otherwise.
      jest.setSystemTime(5_000);
      await report('storing', 5, 10, { inTransaction: true });
      jest.setSystemTime(10_000);
      await report('storing', 10, 10, { inTransaction: true });
      expect(recordRow).not.toHaveBeenCalled();
      jest.setSystemTime(15_000);
      await report('storing', 10, 10);
      expect(recordRow).toHaveBeenCalledWith('storing', 10, 10);
    } finally {
      jest.useRealTimers();
    }
    expect(reportProgress).toHaveBeenLastCalledWith({ stage: 'storing', done: 10, total: 10 });
  });
});
