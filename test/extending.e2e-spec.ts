import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Injectable, Module, Param } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import request from 'supertest';
import { z } from 'zod';
import { AgentTool, AgentToolPlugin } from '../src/agent/tools/agent-tool.js';
import type { AuthUser } from '../src/auth/auth-user.js';
import { CurrentUser } from '../src/auth/current-user.decorator.js';
import { CodedError } from '../src/common/coded-error.js';
import { ProviderRegistry } from '../src/common/provider-registry.js';
import { AppConfig, ConfigValidationError, EMBEDDING_PROVIDERS, LLM_PROVIDERS, loadConfig, RERANK_PROVIDERS } from '../src/config/app-config.js';
import { EMBEDDING_PROVIDER_CLASSES } from '../src/knowledge/index/embedding-registry.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import type { RecallCandidate } from '../src/knowledge/retrieval/hybrid-recall.service.js';
import { RERANK_PROVIDER_CLASSES } from '../src/knowledge/retrieval/rerank-registry.js';
import { RerankProvider } from '../src/knowledge/retrieval/rerank.js';
import { RetrievalStage, RetrievalStagePlugin, StageContext, StageResult, StageState } from '../src/knowledge/retrieval/stages/retrieval-stage.js';
import { CHAT_MODEL_PROVIDER_CLASSES, ChatModelRole } from '../src/models/chat-model-registry.js';
import type { ModelSampling } from '../src/models/sampling.js';
import type { LocalToolRouting } from '../src/models/local-tool-routing.js';
import { FakeOpenAIServer } from './support/fake-openai-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { readSse } from './support/sse-client.js';

/**
 * The worked examples of docs/extending.md, each exactly as the page shows
 * it: a module added to the app and nothing else changed.
 */

// ---- docs/extending.md, "A tool"
@AgentTool()
@Injectable()
export class UnitConverterTool implements AgentToolPlugin {
  readonly name = 'convert_units';
  readonly promptRules = ['- To convert a length between metres and feet, call convert_units with the value and its unit.'];
  readonly localRouting: LocalToolRouting = {
    priority: 5,
    capability: { en: 'convert metres and feet', zh: '换算米和英尺' },
    route: (message) => {
      const match = message.match(/(\d+(?:\.\d+)?)\s*(m|metres?|meters?|ft|feet|foot)\b/i);
      if (!match || !/\bconvert\b|换算/i.test(message)) return null;
      return { call: { value: Number(match[1]), unit: /^f/i.test(match[2]) ? 'ft' : 'm' } };
    },
    // One answer per language: the offline model answers in the question's.
    compose: (_question, output) => ({ en: `That is ${output}.`, zh: `换算结果：${output}。` }),
  };

  create() {
    return tool(async ({ value, unit }: { value: number; unit: 'm' | 'ft' }) => (unit === 'm' ? `${(value / 0.3048).toFixed(2)} ft` : `${(value * 0.3048).toFixed(2)} m`), {
      name: this.name,
      description: 'Converts a length between metres and feet.',
      schema: z.object({ value: z.number(), unit: z.enum(['m', 'ft']) }),
    });
  }
}

@Module({ providers: [UnitConverterTool] })
export class UnitConverterToolModule {}

// ---- docs/extending.md, "A route"
export class BookmarkNotFoundError extends CodedError {
  readonly code = 'not_found';
  constructor(id: string) {
    super(`Bookmark ${id} not found`);
  }
}

@Controller('api/bookmarks')
export class BookmarksController {
  private readonly bookmarks = new Map<string, string>([['welcome', 'Read the README first']]);

  @Get(':id')
  find(@CurrentUser() user: AuthUser, @Param('id') id: string): { id: string; note: string; user: string } {
    const note = this.bookmarks.get(id);
    if (!note) throw new BookmarkNotFoundError(id);
    return { id, note, user: user.userId };
  }
}

@Module({ controllers: [BookmarksController] })
export class BookmarksModule {}

// ---- docs/extending.md, "A chat model provider"
/** LLM_PROVIDER=ollama: a local Ollama server through its OpenAI-compatible API (OLLAMA_BASE_URL, no key). */
export class OllamaChatProvider {
  static readonly providerName = 'ollama';

  static fromConfig(config: AppConfig & { ollama: { baseUrl: string } }, role: ChatModelRole, sampling: ModelSampling = {}): BaseChatModel {
    return new ChatOpenAI({
      model: role === 'main' ? config.llm.model : config.llm.fastModel,
      apiKey: 'ollama', // Ollama ignores the key; the client insists on one
      configuration: { baseURL: config.ollama.baseUrl },
      timeout: config.llm.timeoutMs + 1000,
      maxRetries: config.llm.maxRetries,
      // A request's sampling (the OpenAI-compatible route), else the agent's own.
      temperature: sampling.temperature ?? 0,
      topP: sampling.topP,
      maxTokens: sampling.maxTokens,
      stop: sampling.stop,
    });
  }
}

// ---- docs/extending.md, "An embedding provider"
/** EMBEDDING_PROVIDER=tei: Hugging Face text-embeddings-inference, POST {inputs} to /embed → number[][]. */
export class TeiEmbeddings extends EmbeddingProvider {
  static readonly providerName = 'tei';

  static fromConfig(config: AppConfig): TeiEmbeddings {
    return new TeiEmbeddings(config.embeddings.baseUrl!, config.embeddings.dimensions, config.embeddings.model);
  }

  override readonly ingestBatchSize = 32;
  readonly provider = TeiEmbeddings.providerName;

  constructor(
    private readonly baseUrl: string,
    readonly dimensions: number,
    readonly model: string,
  ) {
    super();
  }

  get name(): string {
    return this.model;
  }

  async embed(texts: string[]): Promise<number[][]> {
    const response = await fetch(`${this.baseUrl}/embed`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ inputs: texts, normalize: true }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`embeddings endpoint answered HTTP ${response.status}`);
    const vectors = (await response.json()) as number[][];
    if (vectors.length !== texts.length || vectors.some((v) => v.length !== this.dimensions)) {
      throw new Error(`embeddings endpoint sent vectors of another size than EMBEDDING_DIMENSIONS=${this.dimensions}`);
    }
    return vectors;
  }
}

// ---- docs/extending.md, "A reranker"
/** RERANK_PROVIDER=tei: text-embeddings-inference's reranker, POST {query, texts} to /rerank → [{index, score}]. */
export class TeiRerank extends RerankProvider {
  static readonly providerName = 'tei';

  static fromConfig(config: AppConfig): TeiRerank {
    return new TeiRerank(config.rerank.url!, config.rerank.model, config.rerank.timeoutMs);
  }

  constructor(
    readonly endpoint: string,
    readonly model: string,
    readonly timeoutMs: number,
  ) {
    super();
  }

  async score(query: string, passages: string[]): Promise<number[]> {
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query, texts: passages }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!response.ok) throw new Error(`rerank endpoint answered HTTP ${response.status}`);
    const scores = passages.map(() => 0);
    for (const { index, score } of (await response.json()) as Array<{ index: number; score: number }>) scores[index] = score;
    return scores;
  }
}

// ---- docs/extending.md, "A retrieval stage"
/** Keeps the best passage of each source, so one long document cannot fill the whole top_k. */
@RetrievalStagePlugin({ after: 'rerank' })
@Injectable()
export class OnePassagePerSourceStage implements RetrievalStage<RecallCandidate> {
  readonly name = 'one_per_source';

  async run({ candidates }: StageState<RecallCandidate>, { step, time }: StageContext): Promise<StageResult<RecallCandidate>> {
    const kept = await time(this.name, async () => {
      const seen = new Set<string>();
      return candidates.filter((candidate) => !seen.has(candidate.source) && seen.add(candidate.source));
    });
    step(this.name, `Kept the best passage of each of ${kept.length} sources`, { dropped: candidates.length - kept.length });
    return { candidates: kept, trace: {} };
  }
}

@Module({ providers: [OnePassagePerSourceStage] })
export class OnePassagePerSourceModule {}

/** A stand-in for text-embeddings-inference: /embed and /rerank, scored by shared words. */
async function startFakeTei(dimensions: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]+/g) ?? []);
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const body = JSON.parse(raw) as { inputs?: string[]; query?: string; texts?: string[] };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (req.url === '/embed') {
        res.end(JSON.stringify(body.inputs!.map((text) => Array.from({ length: dimensions }, (_, i) => (i === text.length % dimensions ? 1 : 0)))));
      } else {
        const query = words(body.query!);
        res.end(JSON.stringify(body.texts!.map((text, index) => ({ index, score: [...words(text)].filter((w) => query.has(w)).length / Math.max(1, query.size) }))));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('docs/extending.md: providers', () => {
  it('a chat model provider is one class in the registry’s list, selected by name', async () => {
    const llm = await new FakeOpenAIServer().start();
    try {
      const registry = new ProviderRegistry<BaseChatModel, [ChatModelRole, ModelSampling?]>({
        variable: 'LLM_PROVIDER',
        select: (config) => config.llm.provider,
        accepted: [...LLM_PROVIDERS, 'ollama'],
        providers: [...CHAT_MODEL_PROVIDER_CLASSES, OllamaChatProvider],
      });
      const config = { ...loadConfig({ LLM_MODEL: 'llama3.2' }), ollama: { baseUrl: llm.url } };
      llm.play({ content: 'Hi from llama.' });
      const model = registry.create({ ...config, llm: { ...config.llm, provider: 'ollama' as never } }, 'main');
      expect((await model.invoke('Hello')).content).toBe('Hi from llama.');
      expect(llm.requests[0].model).toBe('llama3.2');
      llm.play({ content: 'Short.' });
      const sampled = registry.create({ ...config, llm: { ...config.llm, provider: 'ollama' as never } }, 'main', { temperature: 0.5, maxTokens: 9 });
      await sampled.invoke('Hello');
      expect(llm.requests[1].body).toMatchObject({ temperature: 0.5, max_tokens: 9 });
      expect(() => registry.create({ ...config, llm: { ...config.llm, provider: 'olama' as never } }, 'main')).toThrow(ConfigValidationError);
    } finally {
      await llm.stop();
    }
  });

  it('an embedding provider and a reranker are one class each in their registries’ lists', async () => {
    const tei = await startFakeTei(16);
    try {
      const embeddings = new ProviderRegistry<EmbeddingProvider>({
        variable: 'EMBEDDING_PROVIDER',
        select: (config) => config.embeddings.provider,
        accepted: [...EMBEDDING_PROVIDERS, 'tei'],
        providers: [...EMBEDDING_PROVIDER_CLASSES, TeiEmbeddings],
      });
      const rerankers = new ProviderRegistry<RerankProvider | null>({
        variable: 'RERANK_PROVIDER',
        select: (config) => config.rerank.provider,
        accepted: [...RERANK_PROVIDERS, 'tei'],
        providers: [...RERANK_PROVIDER_CLASSES, TeiRerank],
      });
      const config = loadConfig({ EMBEDDING_DIMENSIONS: '16', EMBEDDING_MODEL: 'bge-m3', RERANK_MODEL: 'bge-reranker-v2-m3' });
      const embedder = embeddings.create({ ...config, embeddings: { ...config.embeddings, provider: 'tei' as never, baseUrl: tei.url } });
      const vectors = await embedder.embed(['one', 'three']);
      expect(vectors.map((v) => v.length)).toEqual([16, 16]);
      expect(embedder.name).toBe('bge-m3');
      const reranker = rerankers.create({ ...config, rerank: { ...config.rerank, provider: 'tei' as never, url: `${tei.url}/rerank` } })!;
      expect(await reranker.score('reset the router', ['how to reset the router', 'coffee beans'])).toEqual([1, 0]);
    } finally {
      await tei.stop();
    }
  });
});

describe('docs/extending.md: a retrieval stage', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_SEARCH_PER_MINUTE: '0', KNOWLEDGE_TOP_K: '6' }, undefined, [OnePassagePerSourceModule]);
  });
  afterAll(() => t.close());

  it('runs after the stage it names and is timed in the trace', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/api/knowledge/search')
      .set(t.auth(uniqueUser('stage')))
      .send({ query: 'How do I reset the Aurora router?' })
      .expect(200);
    const sources = res.body.chunks.map((chunk: { source: string }) => chunk.source);
    expect(sources.length).toBeGreaterThan(1);
    expect(new Set(sources).size).toBe(sources.length);
    expect(Object.keys(res.body.rag_trace.timings)).toEqual(expect.arrayContaining(['rerank', 'one_per_source']));
  });

  it('naming a stage that does not exist stops the start', async () => {
    @RetrievalStagePlugin({ after: 'rerunk' })
    @Injectable()
    class Misplaced extends OnePassagePerSourceStage {}
    @Module({ providers: [Misplaced] })
    class MisplacedModule {}
    await expect(createTestApp({}, undefined, [MisplacedModule])).rejects.toThrow(/runs after "rerunk", which is not a stage/);
  });
});

describe('docs/extending.md examples', () => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '0' }, undefined, [UnitConverterToolModule, BookmarksModule]);
    base = await t.listen();
  });
  afterAll(() => t.close());

  describe('a tool', () => {
    it('is called by the offline model by its routing hint and answered from its output', async () => {
      const stream = await readSse(`${base}/api/chat/stream`, {
        method: 'POST',
        headers: { ...t.auth(uniqueUser('tool')), 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'Please convert 10 m to feet' }),
      });
      const tools = stream.events.filter((e) => e.event === 'tool').map((e) => [e.data.name, e.data.phase]);
      expect(tools).toEqual([
        ['convert_units', 'start'],
        ['convert_units', 'end'],
      ]);
      expect(stream.events.at(-1)).toMatchObject({ event: 'done', data: { response: 'That is 32.81 ft.' } });
    });

    it('answers in the language of the question', async () => {
      const res = await request(t.app.getHttpServer())
        .post('/api/chat')
        .set(t.auth(uniqueUser('tool')))
        .send({ message: '请把 10 m 换算成英尺' })
        .expect(200);
      expect(res.body.response).toBe('换算结果：32.81 ft。');
    });

    it('is offered in the offline model’s greeting, and the other tools keep working', async () => {
      const user = uniqueUser('tool');
      const hello = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Hello' }).expect(200);
      expect(hello.body.response).toContain('convert metres and feet');
      const knowledge = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'How many days do I have to return an item?' }).expect(200);
      expect(knowledge.body.rag_trace.tool_name).toBe('knowledge_search');
    });
  });

  describe('a route', () => {
    it('is authenticated by the global guard and answers its coded errors with their status', async () => {
      await request(t.app.getHttpServer()).get('/api/bookmarks/welcome').expect(401);
      const user = uniqueUser('route');
      const found = await request(t.app.getHttpServer()).get('/api/bookmarks/welcome').set(t.auth(user)).expect(200);
      expect(found.body).toEqual({ id: 'welcome', note: 'Read the README first', user });
      const missing = await request(t.app.getHttpServer()).get('/api/bookmarks/nope').set(t.auth(user)).expect(404);
      expect(missing.body).toMatchObject({ statusCode: 404, code: 'not_found', message: 'Bookmark nope not found' });
    });
  });
});
