import { tokenize } from '../common/text.js';
import { LocalHashEmbeddings } from './embeddings.js';

describe('LocalHashEmbeddings', () => {
  it('embeds pre-tokenized texts exactly as it embeds the texts', async () => {
    const embeddings = new LocalHashEmbeddings(64);
    const texts = ['Reset the Aurora X1 router: hold the button for 10 seconds.', '长按复位键十秒钟，路由器恢复出厂设置。', ''];
    expect(await embeddings.embedTokenized(texts, texts.map((text) => tokenize(text)))).toEqual(await embeddings.embed(texts));
    expect(embeddings.ingestBatchSize).toBeLessThanOrEqual(128);
  });
});
