import { DocumentsService } from '../../src/knowledge/ingest/documents.service.js';
import { KnowledgeModule } from '../../src/knowledge/knowledge.module.js';
import { RetrievalService } from '../../src/knowledge/retrieval/retrieval.service.js';
import { createTestModule, TestModule } from '../support/test-module.js';
import { DEFAULT_SCOPE } from '../support/collections.js';

// Three small documents on unrelated subjects; the chain section is long enough
// to be split into several sibling leaves under one parent.
const CHAIN_SECTION = [
  'Oil the bicycle chain every 300 kilometres, or after every ride in the rain.',
  'Wipe the chain with a dry rag before you oil it, so that grit does not turn the oil into a grinding paste.',
  'Put one drop of chain oil on each roller of the chain while you turn the pedals backwards.',
  'Let the oil soak into the chain for five minutes, then wipe the outside of the chain dry again.',
  'A chain that squeaks or looks orange with rust needs oil at once.',
  'Measure chain wear with a chain checker every few months; replace the chain once it has stretched by half a percent.',
  'A worn chain wears out the cassette and the chainrings quickly, so replacing the chain early saves money.',
].join(' ');

const DOCUMENTS: Record<string, string> = {
  'bicycle-chain-care.md': `# Bicycle chain care\n\n## Oiling the chain\n${CHAIN_SECTION}\n\n## Tyres\nPump road tyres to the pressure printed on their side wall once a week.\n`,
  'sourdough-starter.md':
    '# Sourdough starter\n\n## Feeding\nFeed the sourdough starter once a day with equal weights of rye flour and lukewarm water. ' +
    'Keep the jar loosely covered at room temperature. A starter is ready for baking when it doubles within six hours of a feeding.\n',
  'greenhouse-watering.md':
    '# Greenhouse watering\n\n## Tomatoes\nWater greenhouse tomatoes deeply twice a week in the morning, at the base of the plant, never on the leaves. ' +
    'In a heatwave, water them every day and open the roof vents.\n',
};

describe('Retrieval pipeline on its own (KnowledgeModule, real PostgreSQL)', () => {
  let t: TestModule;
  let retrieval: RetrievalService;
  let documents: DocumentsService;

  beforeAll(async () => {
    t = await createTestModule({
      imports: [KnowledgeModule],
      env: { RERANK_PROVIDER: 'local', RAG_AUTO_MERGE: 'true', RAG_DENSE_BACKEND: 'memory', KNOWLEDGE_TOP_K: '3' },
    });
    retrieval = t.module.get(RetrievalService);
    documents = t.module.get(DocumentsService);
    for (const [name, text] of Object.entries(DOCUMENTS)) {
      const { duplicate } = await documents.ingest(name, Buffer.from(text), 'integration-test');
      expect(duplicate).toBe(false);
    }
  });
  afterAll(() => t?.close());

  it('returns the document that answers the question first, with its steps in order and the stages in its trace', async () => {
    const steps: Array<{ stage: string; label: string; details?: Record<string, unknown> }> = [];
    const result = await retrieval.search('How often should I oil my bicycle chain?', 3, {
      scope: DEFAULT_SCOPE,
      onStep: (stage, label, details) => steps.push({ stage, label, details }),
    });

    expect(result.hits.length).toBeGreaterThan(0);
    expect(result.hits.length).toBeLessThanOrEqual(3);
    expect(result.hits[0].source).toBe('bicycle-chain-care.md');
    expect(result.hits[0].text).toContain('Oil the bicycle chain every 300 kilometres');
    expect(result.recalled).toBeGreaterThanOrEqual(result.hits.length);

    // recall first, retrieved last, and the stages that ran in between in pipeline order.
    const stages = steps.map((step) => step.stage);
    expect(stages[0]).toBe('recall');
    expect(stages.at(-1)).toBe('retrieved');
    const order = ['recall', 'auto_merge', 'rerank', 'retrieved'];
    const known = stages.filter((stage) => order.includes(stage));
    expect(known).toEqual(order); // several chain leaves are recalled (merge runs) and the local reranker is on
    expect(steps.at(-1)!.details).toMatchObject({ count: result.hits.length });
    for (const step of steps) expect(step.label).toEqual(expect.any(String));

    const trace = result.trace!;
    expect(trace).toMatchObject({
      recalled_count: result.recalled,
      auto_merge_enabled: true,
      rerank_enabled: true,
      rerank_applied: true,
      top_k: 3,
      final_empty: false,
    });
    expect(trace.recall_k).toBeGreaterThanOrEqual(3);
    // The sibling chain leaves were replaced by their parent section.
    expect(trace.auto_merge_applied).toBe(true);
    expect(trace.auto_merge_replaced_count).toBeGreaterThanOrEqual(2);
    expect(trace.candidates_after_merge).toBeLessThan(result.recalled);
    expect(trace.rerank_input_count).toBe(trace.candidates_after_merge);
    expect(trace.final_chunks?.map((chunk) => chunk.chunk_id)).toEqual(result.hits.map((hit) => hit.chunk_id));
    for (const hit of result.hits) expect(hit.rerank_score).toEqual(expect.any(Number));
    const scores = result.hits.map((hit) => hit.rerank_score!);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('finds each document by its own subject', async () => {
    const [sourdough] = (await retrieval.search('How often do I feed a sourdough starter?', 3, { scope: DEFAULT_SCOPE })).hits;
    expect(sourdough.source).toBe('sourdough-starter.md');
    const [tomatoes] = (await retrieval.search('When should greenhouse tomatoes be watered?', 3, { scope: DEFAULT_SCOPE })).hits;
    expect(tomatoes.source).toBe('greenhouse-watering.md');
  });

  it('stops returning a document once it is deleted, and finds a re-ingested copy again', async () => {
    const question = 'How often do I feed a sourdough starter?';
    const [stored] = (await documents.list()).documents.filter((document) => document.filename === 'sourdough-starter.md');
    expect(await documents.remove(stored.id)).toBe(true);
    const after = await retrieval.search(question, 3, { scope: DEFAULT_SCOPE });
    expect(after.hits.map((hit) => hit.source)).not.toContain('sourdough-starter.md');

    const again = await documents.ingest('sourdough-starter.md', Buffer.from(DOCUMENTS['sourdough-starter.md']), 'integration-test');
    expect(again.duplicate).toBe(false);
    expect((await retrieval.search(question, 3, { scope: DEFAULT_SCOPE })).hits[0].source).toBe('sourdough-starter.md');
  });
});
