import fc from 'fast-check';
import { propertyRuns } from '../../test/support/property-runs.js';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  normalizeAndValidateRagTrace,
  normalizeChunks,
  normalizeHitlResumeState,
  normalizePendingHitl,
  normalizeRagSubTrace,
  normalizeRagTrace,
  normalizeTraceFields,
} from './trace.normalizer.js';
import { RagTrace, TRACE_PROTOCOL_VERSION } from './trace.protocol.js';

const trace = (fields: Record<string, unknown>) => normalizeRagTrace(fields) as Record<string, unknown>;

describe('normalizeChunks', () => {
  it('keeps only RetrievedChunk fields and drops chunks without a source', () => {
    expect(
      normalizeChunks([
        { source: 'manual.pdf', page: 3, text: '保修两年', score: 0.8, rrf_rank: 1, rerank_score: 0.9, chunk_id: 'c1', vector: [1, 2] },
        { text: 'orphan' },
        { source: '', text: 'empty source' },
        null,
        'text',
        42,
      ]),
    ).toEqual([{ source: 'manual.pdf', page: 3, text: '保修两年', score: 0.8, rrf_rank: 1, rerank_score: 0.9, chunk_id: 'c1' }]);
  });

  it("keeps a chunk's collection, and chunks of traces stored before collections stay valid without it", () => {
    const collection = '00000000-0000-4000-8000-000000000001';
    expect(
      normalizeChunks([
        { source: 'a.md', chunk_id: '7', collection_id: collection },
        { source: 'old.md', chunk_id: '8' },
      ]),
    ).toEqual([
      { source: 'a.md', chunk_id: '7', collection_id: collection },
      { source: 'old.md', chunk_id: '8' },
    ]);
    expect(
      normalizeChunks([
        { source: 'a.md', collection_id: 42 },
        { source: 'b.md', collection_id: null },
      ]),
    ).toEqual([{ source: 'a.md' }, { source: 'b.md' }]);
    expect(trace({ final_chunks: [{ source: 'a.md', collection_id: collection }] }).final_chunks).toEqual([{ source: 'a.md', collection_id: collection }]);
  });

  it('drops invalid numbers field by field, keeping the chunk', () => {
    expect(normalizeChunks([{ source: 'a', page: -1, score: 'NaN', rrf_rank: 0, rerank_score: Infinity }])).toEqual([{ source: 'a' }]);
    expect(normalizeChunks([{ source: 'a', page: null, score: '0.5' }])).toEqual([{ source: 'a', page: null, score: 0.5 }]);
  });

  it('keeps where a chunk came from: sheet and row, heading path; null or absent in older traces', () => {
    expect(
      normalizeChunks([
        { source: 'prices.xlsx', page: null, location: { sheet: 'Products', row: 12, junk: true } },
        { source: 'guide.docx', location: { heading_path: ['Returns', 'Refunds', 7], row: 0 } },
        { source: 'big.csv', location: { row: '2', last_row: 9 } },
        { source: 'old.md', location: null },
        { source: 'older.md' },
        { source: 'odd.md', location: 'sheet 1' },
      ]),
    ).toEqual([
      { source: 'prices.xlsx', page: null, location: { sheet: 'Products', row: 12 } },
      { source: 'guide.docx', location: { heading_path: ['Returns', 'Refunds'] } },
      { source: 'big.csv', location: { row: 2 } },
      { source: 'old.md', location: null },
      { source: 'older.md' },
      { source: 'odd.md' },
    ]);
    const long = normalizeChunks([{ source: 'a.md', location: { heading_path: Array.from({ length: 9 }, () => 'h'.repeat(300)) } }]);
    expect(long[0].location).toEqual({ heading_path: Array.from({ length: 6 }, () => 'h'.repeat(200)) });
    const stored = trace({
      final_chunks: [
        { source: 'prices.xlsx', location: { sheet: '价格', row: 3 } },
        { source: 'old.md', page: 2 },
      ],
    });
    expect(validateSync(plainToInstance(RagTrace, stored) as object)).toEqual([]);
    expect(stored.final_chunks).toEqual([
      { source: 'prices.xlsx', location: { sheet: '价格', row: 3 } },
      { source: 'old.md', page: 2 },
    ]);
  });

  it('returns [] for anything that is not a list', () => {
    for (const value of [null, undefined, {}, 'chunks', 3]) expect(normalizeChunks(value)).toEqual([]);
  });

  it('caps a list at 100 chunks', () => {
    const many = Array.from({ length: 500 }, (_, i) => ({ source: `s${i}` }));
    expect(normalizeChunks(many)).toHaveLength(500); // normalizeChunks itself keeps all …
    expect((trace({ final_chunks: many }).final_chunks as unknown[]).length).toBe(100); // … the trace bounds it
  });
});

describe('normalizeTraceFields by field group', () => {
  it('tool and query', () => {
    expect(normalizeTraceFields({ tool_used: 'true', tool_name: 'knowledge_search', query: '退货', retrieval_stage: 'rewrite' })).toEqual({
      tool_used: true,
      tool_name: 'knowledge_search',
      query: '退货',
      retrieval_stage: 'rewrite',
    });
    expect(normalizeTraceFields({ tool_used: 'yes', retrieval_stage: 'final', query: 5 })).toEqual({});
  });

  it('complexity', () => {
    expect(
      normalizeTraceFields({
        complexity: 'complex',
        complexity_reason: 'two products',
        sub_questions: ['a', 2, 'b', 'c', 'd', 'e'],
        sub_agent_count: 4,
        merged_evidence_count: 7.4,
      }),
    ).toEqual({ complexity: 'complex', complexity_reason: 'two products', sub_questions: ['a', 'b', 'c', 'd'], sub_agent_count: 4, merged_evidence_count: 7 });
    expect(normalizeTraceFields({ complexity: 'medium', sub_agent_count: -1, sub_questions: 'a' })).toEqual({});
  });

  it('retrieval config', () => {
    expect(
      normalizeTraceFields({
        retrieval_mode: 'hybrid',
        pipeline_id: 'p1',
        recall_k: '20',
        recall_k_source: 'multiplier',
        recall_k_config_error: null,
        recall_multiplier: 4,
        top_k: 5,
        recalled_count: 18,
        initial_chunk_level: 3,
      }),
    ).toEqual({
      retrieval_mode: 'hybrid',
      pipeline_id: 'p1',
      recall_k: 20,
      recall_k_source: 'multiplier',
      recall_k_config_error: null,
      recall_multiplier: 4,
      top_k: 5,
      recalled_count: 18,
      initial_chunk_level: 3,
    });
    expect(normalizeTraceFields({ recall_k_source: 'config', recall_multiplier: -2, top_k: 'five' })).toEqual({});
  });

  it('auto-merge', () => {
    expect(
      normalizeTraceFields({
        auto_merge_enabled: true,
        auto_merge_applied: false,
        auto_merge_threshold: 0.5,
        auto_merge_replaced_count: 0,
        auto_merge_level: null,
        candidates_after_merge: 12,
      }),
    ).toEqual({
      auto_merge_enabled: true,
      auto_merge_applied: false,
      auto_merge_threshold: 0.5,
      auto_merge_replaced_count: 0,
      auto_merge_level: null,
      candidates_after_merge: 12,
    });
    expect(normalizeTraceFields({ auto_merge_threshold: 1.5 })).toEqual({});
  });

  it('rerank', () => {
    const fields = {
      rerank_enabled: true,
      rerank_applied: false,
      rerank_model: 'jina-reranker',
      rerank_endpoint: 'http://127.0.0.1:9/rerank',
      rerank_error: 'timeout after 800 ms',
      rerank_timeout_ms: 800,
      min_relevance: 0.2,
      rerank_input_count: 20,
      rerank_output_count: 20,
      after_threshold_count: 4,
      final_empty: false,
    };
    expect(normalizeTraceFields(fields)).toEqual(fields);
    expect(normalizeTraceFields({ rerank_timeout_ms: -5, final_empty: 0 })).toEqual({});
  });

  it('grading', () => {
    const fields = {
      grade_route: 'clarify',
      evidence_status: 'needs_choice',
      evidence_relevance: 'weak',
      evidence_answerability: 'partial',
      evidence_ambiguity: null,
      grade_confidence: 0.35,
      grade_reason: '证据分散在两个产品之间',
    };
    expect(normalizeTraceFields(fields)).toEqual(fields);
    expect(
      normalizeTraceFields({
        grade_route: 'reject',
        evidence_status: 'great',
        evidence_relevance: 'medium',
        evidence_answerability: 'all',
        evidence_ambiguity: 'vague',
        grade_confidence: 1.2,
      }),
    ).toEqual({});
    expect(normalizeTraceFields({ grade_confidence: -0.1 })).toEqual({});
  });

  it('rewrite', () => {
    expect(
      normalizeTraceFields({
        rewrite_mode: 'hyde',
        rewritten_query: 'q2',
        step_back_question: null,
        hypothetical_doc: 'A hypothetical answer.',
        rewrite_chunks: [{ source: 'b.md', extra: true }],
      }),
    ).toEqual({
      rewrite_mode: 'hyde',
      rewritten_query: 'q2',
      step_back_question: null,
      hypothetical_doc: 'A hypothetical answer.',
      rewrite_chunks: [{ source: 'b.md' }],
    });
    expect(normalizeTraceFields({ rewrite_mode: 'paraphrase' })).toEqual({});
  });

  it('HITL, including the pre-resume snapshot', () => {
    expect(
      normalizeTraceFields({
        missing_conditions: ['型号', 7],
        clarification_prompt: '您指的是哪个型号？',
        clarification_options: ['X1', 'X2'],
        hitl_resumed: true,
        user_supplement: 'X2',
        hitl_resume_strategy: 'merge_supplement',
        pre_resume_snapshot: { query: 'warranty', evidence_status: 'needs_choice', junk: 1, final_chunks: [{ source: 'x.md' }, {}] },
        hitl_chunks: [{ source: 'x2.md', page: 2 }],
      }),
    ).toEqual({
      missing_conditions: ['型号'],
      clarification_prompt: '您指的是哪个型号？',
      clarification_options: ['X1', 'X2'],
      hitl_resumed: true,
      user_supplement: 'X2',
      hitl_resume_strategy: 'merge_supplement',
      pre_resume_snapshot: { query: 'warranty', evidence_status: 'needs_choice', final_chunks: [{ source: 'x.md' }] },
      hitl_chunks: [{ source: 'x2.md', page: 2 }],
    });
  });

  it('timings keep non-negative numbers only', () => {
    expect(normalizeTraceFields({ timings: { recall: 12.5, rerank: '3', bad: -1, worse: 'slow' } })).toEqual({
      timings: { recall: 12.5, rerank: 3 },
    });
  });

  it('truncates over-long strings without splitting a surrogate pair', () => {
    const long = '😀'.repeat(5000); // 10000 UTF-16 units
    const query = normalizeTraceFields({ query: long })!.query as string;
    expect(query.length).toBeLessThanOrEqual(8000);
    expect(query.endsWith('\ud83d')).toBe(false);
  });
});

describe('normalizeRagSubTrace and normalizeRagTrace', () => {
  it('normalizes each sub-trace, dropping unknown fields and nested sub-traces', () => {
    const result = trace({
      complexity: 'complex',
      sub_traces: [{ query: 'part one', unknown: 1, sub_traces: [{ query: 'nested' }], protocol_version: 9 }, 'junk', { final_chunks: [{ source: 'a.md' }, { text: 'x' }] }],
    });
    expect(result.sub_traces).toEqual([{ query: 'part one' }, { final_chunks: [{ source: 'a.md' }] }]);
    expect(normalizeRagSubTrace({ query: 'q', sub_traces: [] })).toEqual({ query: 'q' });
  });

  it('keeps at most four sub-traces', () => {
    const result = trace({ sub_traces: Array.from({ length: 9 }, (_, i) => ({ query: `q${i}` })) });
    expect((result.sub_traces as unknown[]).length).toBe(4);
  });

  it('stamps the protocol version, overriding whatever the input claimed', () => {
    expect(trace({ protocol_version: 99 }).protocol_version).toBe(TRACE_PROTOCOL_VERSION);
    expect(trace({}).protocol_version).toBe(TRACE_PROTOCOL_VERSION);
  });

  it('answers null for values that are not objects', () => {
    for (const value of [null, undefined, 1, 'trace', [], [{ tool_used: true }], true]) {
      expect(normalizeRagTrace(value)).toBeNull();
    }
  });

  it('survives cyclic input and getters that throw', () => {
    const cyclic: Record<string, unknown> = { tool_used: true };
    cyclic.sub_traces = [cyclic];
    cyclic.final_chunks = [cyclic];
    expect(normalizeRagTrace(cyclic)).toMatchObject({ tool_used: true, sub_traces: [{ tool_used: true }], final_chunks: [] });
    const hostile = Object.defineProperty({}, 'query', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(() => normalizeRagTrace(hostile)).not.toThrow();
  });
});

describe('HITL states', () => {
  it('normalizes a pending HITL task and requires its identity', () => {
    expect(
      normalizePendingHitl({
        task_id: 't1',
        original_question: '保修多久？',
        clarification_prompt: '哪个型号？',
        options: ['X1', 'X2', 3],
        hitl_type: 'choose',
        retrieval_status: 'needs_choice',
        user_supplement: null,
        created_at: '2026-11-30T00:00:00.000Z',
        extra: true,
      }),
    ).toEqual({
      task_id: 't1',
      original_question: '保修多久？',
      clarification_prompt: '哪个型号？',
      options: ['X1', 'X2'],
      hitl_type: 'choose',
      retrieval_status: 'needs_choice',
      user_supplement: null,
      created_at: '2026-11-30T00:00:00.000Z',
    });
    expect(normalizePendingHitl({ original_question: 'q' })).toBeNull();
    expect(normalizePendingHitl({ task_id: 't', original_question: '' })).toBeNull();
  });

  it('normalizes a resume state', () => {
    expect(
      normalizeHitlResumeState({
        original_question: 'q',
        hitl_route: 'clarify',
        retrieval_status: 'needs_clarification',
        rewrite_count: 1,
        complexity: 'simple',
        sub_questions: ['a', 'b', 'c', 'd', 'e'],
      }),
    ).toEqual({
      original_question: 'q',
      hitl_route: 'clarify',
      retrieval_status: 'needs_clarification',
      rewrite_count: 1,
      complexity: 'simple',
      sub_questions: ['a', 'b', 'c', 'd'],
    });
    expect(normalizeHitlResumeState({ hitl_route: 'clarify' })).toBeNull();
  });
});

describe('property: any JSON value in, a valid trace or null out', () => {
  const known = Object.keys(RagTrace.fieldTable);
  const traceLike = fc.dictionary(
    fc.oneof(fc.constantFrom(...known), fc.string()),
    fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.array(fc.dictionary(fc.constantFrom('source', 'page', 'location', 'text', 'score', 'rrf_rank', 'junk'), fc.jsonValue({ maxDepth: 2 }))),
    ),
  );

  it('never throws and always returns a trace that passes validation, or null', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 5 }), traceLike, fc.record({ sub_traces: fc.array(traceLike) })), (value) => {
        const result = normalizeRagTrace(value);
        if (result === null) return value === null || typeof value !== 'object' || Array.isArray(value);
        const errors = validateSync(plainToInstance(RagTrace, result) as object);
        return (
          errors.length === 0 &&
          JSON.stringify(normalizeAndValidateRagTrace(value)) === JSON.stringify(result) &&
          Object.keys(result).every((key) => known.includes(key)) &&
          JSON.stringify(normalizeRagTrace(result)) === JSON.stringify(result) // idempotent
        );
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});
