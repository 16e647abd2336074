import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tokenize } from '../../common/text.js';
import { AppConfig, ConfigValidationError, EMBEDDING_PROVIDERS, loadConfig, RERANK_PROVIDERS } from '../../config/app-config.js';
import { createEmbeddingProvider, EMBEDDING_PROVIDER_REGISTRY } from './embedding-registry.js';
import { LocalHashEmbeddings, OpenAICompatibleEmbeddings } from './embeddings.js';
import { createRerankProvider, RERANK_PROVIDER_REGISTRY } from '../retrieval/rerank-registry.js';
import { HttpRerank, LocalRerank } from '../retrieval/rerank.js';

describe('LocalHashEmbeddings', () => {
  it('embeds pre-tokenized texts exactly as it embeds the texts', async () => {
    const embeddings = new LocalHashEmbeddings(64);
    const texts = ['Reset the Aurora X1 router: hold the button for 10 seconds.', '长按复位键十秒钟，路由器恢复出厂设置。', ''];
    expect(
      await embeddings.embedTokenized(
        texts,
        texts.map((text) => tokenize(text)),
      ),
    ).toEqual(await embeddings.embed(texts));
    expect(embeddings.ingestBatchSize).toBeLessThanOrEqual(128);
  });
});

interface SeenRequest {
  path: string;
  authorization: string | undefined;
  body: { model?: string; input?: string[]; dimensions?: number; encoding_format?: string };
}

/** An OpenAI-compatible `/embeddings` endpoint on a loopback port that records what it was sent. */
async function fakeEmbeddingsServer(): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as SeenRequest['body'];
  };
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const data = (body.input ?? []).map((_, index) => {
        const vector = Array.from({ length: body.dimensions ?? 4 }, (_, i) => (i === index ? 1 : 0));
        // The OpenAI client asks for base64 unless told otherwise.
        const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('embedding providers', () => {
  it('offer exactly the names EMBEDDING_PROVIDER accepts', () => {
    expect([...EMBEDDING_PROVIDER_REGISTRY.names].sort()).toEqual([...EMBEDDING_PROVIDERS].sort());
  });

  it('build the local embeddings by default, at the configured size', () => {
    const provider = createEmbeddingProvider(loadConfig({ EMBEDDING_DIMENSIONS: '32' }));
    expect(provider).toBeInstanceOf(LocalHashEmbeddings);
    expect(provider.dimensions).toBe(32);
  });

  it('send openai embeddings to EMBEDDING_BASE_URL with EMBEDDING_API_KEY, not to the chat endpoint', async () => {
    const embeddings = await fakeEmbeddingsServer();
    const chat = await fakeEmbeddingsServer();
    try {
      const config = loadConfig({
        EMBEDDING_PROVIDER: 'openai',
        EMBEDDING_BASE_URL: embeddings.url,
        EMBEDDING_API_KEY: 'embedding-key',
        EMBEDDING_MODEL: 'embed-model',
        EMBEDDING_DIMENSIONS: '16',
        LLM_BASE_URL: chat.url,
        LLM_API_KEY: 'chat-key',
        LLM_MAX_RETRIES: '0',
      });
      const provider = createEmbeddingProvider(config);
      expect(provider).toBeInstanceOf(OpenAICompatibleEmbeddings);
      const vectors = await provider.embed(['first', 'second']);
      expect(vectors.map((vector) => vector.length)).toEqual([16, 16]);
      expect(vectors[1][1]).toBe(1);
      expect(embeddings.seen).toEqual([
        expect.objectContaining({
          path: '/v1/embeddings',
          authorization: 'Bearer embedding-key',
          body: expect.objectContaining({ model: 'embed-model', input: ['first', 'second'], dimensions: 16 }),
        }),
      ]);
      expect(chat.seen).toEqual([]);
    } finally {
      await embeddings.close();
      await chat.close();
    }
  });

  it('fall back to LLM_BASE_URL and LLM_API_KEY', async () => {
    const server = await fakeEmbeddingsServer();
    try {
      const provider = createEmbeddingProvider(loadConfig({ EMBEDDING_PROVIDER: 'openai', LLM_BASE_URL: server.url, LLM_API_KEY: 'shared-key', LLM_MAX_RETRIES: '0' }));
      await provider.embed(['text']);
      expect(server.seen).toEqual([expect.objectContaining({ path: '/v1/embeddings', authorization: 'Bearer shared-key' })]);
    } finally {
      await server.close();
    }
  });

  it('refuse openai with neither a base URL nor a key, even from a hand-built configuration', () => {
    const base = loadConfig({});
    const handBuilt: AppConfig = { ...base, embeddings: { ...base.embeddings, provider: 'openai', baseUrl: undefined, apiKey: undefined } };
    expect(() => createEmbeddingProvider(handBuilt)).toThrow(ConfigValidationError);
    expect(() => createEmbeddingProvider(handBuilt)).toThrow(/EMBEDDING_API_KEY: required when EMBEDDING_PROVIDER=openai/);
  });
});

describe('rerank providers', () => {
  it('offer exactly the names RERANK_PROVIDER accepts', () => {
    expect([...RERANK_PROVIDER_REGISTRY.names].sort()).toEqual([...RERANK_PROVIDERS].sort());
  });

  it('build the local, http or no reranker', () => {
    expect(createRerankProvider(loadConfig({}))).toBeInstanceOf(LocalRerank);
    const http = createRerankProvider(loadConfig({ RERANK_PROVIDER: 'http', RERANK_URL: 'http://127.0.0.1:9/rerank', RERANK_TIMEOUT_MS: '500' }));
    expect(http).toBeInstanceOf(HttpRerank);
    expect(http).toMatchObject({ endpoint: 'http://127.0.0.1:9/rerank', timeoutMs: 500 });
    expect(createRerankProvider(loadConfig({ RERANK_PROVIDER: 'none' }))).toBeNull();
  });
});

describe('the local rerank', () => {
  it('scores a passage in the other script than the question by the names and numbers they share, above the default RAG_MIN_RELEVANCE', async () => {
    const rerank = new LocalRerank(1000);
    const [x2Reset, x1Reset] = await rerank.score('X2 节点重置要按几秒？', [
      'To reset an Aurora X2 node, press the reset pinhole for 5 seconds with a paper clip until the light turns red.',
      'To reset the Aurora X1 to factory settings, press and hold the reset button on the back for 10 seconds.',
    ]);
    expect(x2Reset).toBeGreaterThanOrEqual(loadConfig({}).knowledge.minRelevance);
    expect(x2Reset).toBeGreaterThan(x1Reset);
  });

  it('scores a passage in the other language by the translations of the question’s words (CC-CEDICT glossary)', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const [hotels, meals] = await rerank.score('酒店住宿每晚限额多少？', [
      'The nightly hotel limit is 180 USD in most cities and 250 USD in high-cost cities.',
      'Meals during travel are reimbursed up to 60 USD per day.',
    ]);
    expect(hotels).toBeGreaterThanOrEqual(minRelevance);
    expect(meals).toBeLessThan(minRelevance);
    const [refunds, gifts] = await rerank.score('When is a refund paid back after a return?', [
      '退货商品入库检验合格后，退款会在 5 个工作日内原路退回。',
      '礼品卡不支持兑换现金。',
    ]);
    expect(refunds).toBeGreaterThanOrEqual(minRelevance);
    expect(refunds).toBeGreaterThan(gifts);
  });

  it('reads a Chinese question with English words in it in both languages: a Chinese passage holds the English words by translation', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const [points, meals] = await rerank.score('我的 points 什么时候 expire？', [
      '积分自获得之日起 12 个月内有效，过期自动清零。',
      'Meals during travel are reimbursed up to 60 USD per day.',
    ]);
    expect(points).toBeGreaterThanOrEqual(minRelevance);
    expect(points).toBeGreaterThan(meals);
    // Its Chinese words are held by a Chinese passage only as written: 积分 and 指示 meet in "point", 积分 and 点 too.
    const [transfer, firmware] = await rerank.score('points 能 transfer 吗？', ['积分不能兑换现金，也不能转让给其他账户。', '路由器固件在凌晨 2 点自动更新。']);
    expect(transfer).toBeGreaterThan(firmware);
    // An acronym or a unit ("VIP", "GHz") is no English word of the question's.
    const [light] = await rerank.score('VIP 积分多久过期？', ['指示灯常亮表示连接正常。', '积分自获得之日起 12 个月内有效。']);
    expect(light).toBeLessThan(minRelevance);
  });

  it('counts a broader word for a question word that no passage holds ("alcohol" for "wine"), and only then', async () => {
    const rerank = new LocalRerank(1000);
    const [meals, warranty] = await rerank.score('Can I claim the wine I drank with dinner?', [
      'Meals during travel are reimbursed up to 60 USD per day. Alcohol is not reimbursable.',
      'The warranty does not cover damage caused by water, drops or unauthorized repairs.',
    ]);
    expect(meals).toBeGreaterThanOrEqual(loadConfig({}).knowledge.minRelevance);
    expect(meals).toBeGreaterThan(warranty);
    const alcohol = 'Alcohol is not reimbursable.';
    const [alone] = await rerank.score('wine', [alcohol, 'The warranty does not cover water damage.']);
    const [besideWine] = await rerank.score('wine', [alcohol, 'Wine is served with dinner.']);
    expect(besideWine).toBeLessThan(alone);
    // A broader word the question names itself counts as that word, not once more for the narrower one: "wine" then
    // adds to the passage's share of the question no more than a word without a broader word does ("qzxv"), where
    // counting it would add a quarter of the score (half of "wine"'s half of the share).
    const other = 'The warranty does not cover water damage.';
    const [both] = await rerank.score('wine alcohol', [alcohol, other]);
    const [unknown] = await rerank.score('qzxv alcohol', [alcohol, other]);
    expect(Math.abs(both - unknown)).toBeLessThan(0.05);
  });

  it('scores a passage in the other language by the translations ECDICT gives where CC-CEDICT has none (yuan: 元, spend: 消费 is not one)', async () => {
    const rerank = new LocalRerank(1000);
    const [points] = await rerank.score('How many points do I get for each yuan I spend?', [
      '## 积分获取\n会员每消费 1 元可获得 1 积分，生日当月消费享受双倍积分。 ## 积分使用\n100 积分可以抵扣 1 元。',
    ]);
    expect(points).toBeGreaterThanOrEqual(loadConfig({}).knowledge.minRelevance);
  });

  it('finds an English word that has translations of its own ("allowance": 津贴) across languages only by them, not by a word of its stem ("allow": 许可)', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const [licences, meals] = await rerank.score('What is the allowance for meals?', ['定制商品、已激活的软件许可和礼品卡不支持无理由退货。', '出差期间每日伙食津贴为 60 美元。']);
    expect(licences).toBeLessThan(minRelevance);
    expect(meals).toBeGreaterThanOrEqual(minRelevance);
  });

  it('compares the words of the question and the passages by stem ("receipt" is held by "receipts", "travelling" by "travel")', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const [receipts, hotels] = await rerank.score('Do I need a receipt when travelling?', [
      'Submit receipts for every item after travel.',
      'Hotels are booked through the portal.',
    ]);
    expect(receipts).toBeGreaterThanOrEqual(minRelevance);
    expect(receipts).toBeGreaterThan(hotels);
    const [plural] = await rerank.score('receipts travel', ['Submit receipts for every item after travel.']);
    const [singular] = await rerank.score('receipt travelling', ['Submit receipts for every item after travel.']);
    // The words' share is the same; only the embeddings' cosine, which hashes the words as written, tells them apart.
    expect(singular).toBeGreaterThan(0.7 * plural);
  });

  it('reads a word with an English clitic as the word ("node\'s" holds "node"), and a contracted stopword ("What\'s") as none', async () => {
    const rerank = new LocalRerank(1000);
    const [withClitic] = await rerank.score("What's each node's placement?", ['The app rates the placement of each node.']);
    const [plain] = await rerank.score('each node placement?', ['The app rates the placement of each node.']);
    expect(withClitic).toBe(plain);
  });

  it('counts, across languages, the words that name what is asked about, found even where the segmenter cut their translation', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    // "happens" and "get" ask; 优惠券 (coupon) is cut 优惠|券 by the segmenter.
    const [coupons, delivery] = await rerank.score('What happens to my coupon when I get a refund?', [
      '使用优惠券的订单，退款金额按实际支付金额计算，优惠券不予退还。',
      '订单一般在三天内送达。',
    ]);
    expect(coupons).toBeGreaterThanOrEqual(minRelevance);
    expect(delivery).toBeLessThan(minRelevance);
  });

  it('does not count, across languages, the function words and light verbs no glossary translates ("have", "become")', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const pointsRules =
      '# 会员积分规则 ## 积分获取 会员每消费 1 元可获得 1 积分，生日当月消费享受双倍积分。 参与评价并上传图片可额外获得 20 积分。 ## 积分使用 100 积分可以抵扣 1 元，单笔订单最多抵扣订单金额的 20%。 积分不能兑换现金，也不能转让给其他账户。 ## 积分有效期 积分自获得之日起 12 个月内有效，过期自动清零。 会员等级降级不会影响已有积分。 ## 会员等级 年度累计消费满 2000 元升级为银卡会员，满 5000 元升级为金卡会员。 金卡会员享受免费退货运费和专属客服。';
    const [points] = await rerank.score('How much do I have to spend in a year to become a gold member?', [pointsRules]);
    expect(points).toBeGreaterThanOrEqual(minRelevance);
  });

  it('does not count, across languages, the Chinese function words ("以后", "才能" of 才能用) more than the English ones', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const setup =
      '# Aurora X1 Router — User Manual\n## Setup\nConnect the Aurora X1 router to your modem with the blue Ethernet cable. Power it on and wait until the status light turns solid green, which takes about two minutes.';
    const [plain] = await rerank.score('X1 插上电要等多久？', [setup]);
    const [joined] = await rerank.score('X1 插上电以后要等多久才能用？', [setup]);
    expect(joined).toBeGreaterThanOrEqual(minRelevance);
    expect(joined).toBeGreaterThanOrEqual(plain - 0.05);
  });

  it('finds across languages a span of time said in another unit ("within a month" in "30 天内")', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const [returns] = await rerank.score('Can I return something within a month of delivery if I have not used it?', [
      '# 退货与保修政策 ## 退货 自签收之日起 30 天内，未使用且包装完好的商品可以申请无理由退货。 定制商品、已激活的软件许可和礼品卡不支持无理由退货。 退货运费由买家承担；如果商品存在质量问题，运费由我们承担。 ## 退款 退货商品入库检验合格后，退款会在 5 个工作日内原路退回。 使用优惠券的订单，退款金额按实际支付金额计算，优惠券不予退还。 ## 保修 路由器类产品（包括 Aurora X1）整机保修两年，Aurora X2 网状路由系统保修三年。 电源适配器等配件保修一年。 保修期内非人为损坏的故障可免费维修或更换。 进水、摔落和私自拆修造成的损坏不在保修范围内。 ## 换货 签收后 15 天内出现性能故障的商品，可以直接申请换货，换货商品重新计算保修期。',
    ]);
    expect(returns).toBeGreaterThanOrEqual(minRelevance);
  });

  it('counts a Chinese question by its words, not by the bigrams across two of them', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    const [pointsRules, hotels] = await rerank.score('我的积分能送给家人用吗？', [
      '# 会员积分规则 ## 积分使用 100 积分可以抵扣 1 元，单笔订单最多抵扣订单金额的 20%。 积分不能兑换现金，也不能转让给其他账户。',
      '# 差旅报销 ## 住宿 每晚住宿标准为 500 元，家属随行费用自理。',
    ]);
    expect(pointsRules).toBeGreaterThanOrEqual(minRelevance);
    expect(hotels).toBeLessThan(minRelevance);
  });

  it('weighs a term of the question by how rare it is among the passages: words that only one of them holds count more than words most of them hold', async () => {
    const rerank = new LocalRerank(1000);
    const [app, firmware, technician] = await rerank.score('When is the firmware update installed on the X1 router?', [
      'The X1 router app is installed on your phone, and the X1 router shows its status in the installed app.',
      'A firmware update runs at night.',
      'The X1 router is installed by a technician.',
    ]);
    expect(firmware).toBeGreaterThan(app);
    expect(firmware).toBeGreaterThan(technician);
  });

  it('weighs a word no passage holds (a misspelling) as the held words weigh on average: it does not sink passages that share the rest', async () => {
    const rerank = new LocalRerank(1000);
    const minRelevance = loadConfig({}).knowledge.minRelevance;
    // Every passage holds "router" and "password"; no passage holds "chnage" or "pasword".
    const manuals = Array.from({ length: 10 }, (_, i) => `Model ${i + 1}: the router password is on the label under the router.`);
    const scores = await rerank.score('router password chnage pasword', manuals);
    // Scored alone, a passage weighs every word alike; among passages that all hold the same words, so it does here.
    const alone = await Promise.all(manuals.map(async (manual) => (await rerank.score('router password chnage pasword', [manual]))[0]));
    expect(scores).toEqual(alone);
    for (const score of scores) expect(score).toBeGreaterThanOrEqual(minRelevance);
  });
});
