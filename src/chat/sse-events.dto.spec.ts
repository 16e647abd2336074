import { toolEndSummary, toolFailedSummary, toolStartSummary, TOOL_ARG_SUMMARY_MAX_LENGTH, TOOL_OUTPUT_SUMMARY_MAX_LENGTH } from './sse-events.dto.js';

describe('tool event summaries', () => {
  it("keeps a call's arguments as an object, cutting each string (at any depth) to the limit", () => {
    const long = '检'.repeat(TOOL_ARG_SUMMARY_MAX_LENGTH + 50);
    const summary = toolStartSummary({ query: long, top_k: 3, filters: { tags: [long, 'x'] }, exact: true });
    const clipped = `${'检'.repeat(TOOL_ARG_SUMMARY_MAX_LENGTH - 1)}…`;
    expect(summary).toEqual({ args: { query: clipped, top_k: 3, filters: { tags: [clipped, 'x'] }, exact: true } });
    expect(toolStartSummary({ query: 'short' })).toEqual({ args: { query: 'short' } });
  });

  it('cuts the output to the limit and says whether it did', () => {
    expect(toolEndSummary('It is 09:30.')).toEqual({ output: 'It is 09:30.', truncated: false });
    const exact = 'a'.repeat(TOOL_OUTPUT_SUMMARY_MAX_LENGTH);
    expect(toolEndSummary(exact)).toEqual({ output: exact, truncated: false });
    const cut = toolEndSummary(`${exact}b`);
    expect(cut.truncated).toBe(true);
    expect(Array.from(cut.output!)).toHaveLength(TOOL_OUTPUT_SUMMARY_MAX_LENGTH);
  });

  it("tells a failure without the tool's text", () => {
    expect(toolFailedSummary()).toEqual({ failed: true });
  });
});
