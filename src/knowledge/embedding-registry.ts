import { ProviderRegistry } from '../common/provider-registry.js';
import { AppConfig, EMBEDDING_PROVIDERS } from '../config/app-config.js';
import { EmbeddingProvider, LocalHashEmbeddings, OpenAICompatibleEmbeddings } from './embeddings.js';

/** The embeddings providers, chosen by EMBEDDING_PROVIDER. */
export const EMBEDDING_PROVIDER_REGISTRY = new ProviderRegistry<EmbeddingProvider>({
  variable: 'EMBEDDING_PROVIDER',
  select: (config) => config.embeddings.provider,
  accepted: EMBEDDING_PROVIDERS,
  providers: [LocalHashEmbeddings, OpenAICompatibleEmbeddings],
});

export function createEmbeddingProvider(config: AppConfig): EmbeddingProvider {
  return EMBEDDING_PROVIDER_REGISTRY.create(config);
}
