import { ProviderRegistry } from '../../common/provider-registry.js';
import { AppConfig, EMBEDDING_PROVIDERS } from '../../config/app-config.js';
import { EmbeddingProvider, LocalHashEmbeddings, OpenAICompatibleEmbeddings } from './embeddings.js';

/** The embeddings provider classes: add a provider's class here (and its name to EMBEDDING_PROVIDERS). */
export const EMBEDDING_PROVIDER_CLASSES = [LocalHashEmbeddings, OpenAICompatibleEmbeddings] as const;

/** The embeddings providers, chosen by EMBEDDING_PROVIDER. */
export const EMBEDDING_PROVIDER_REGISTRY = new ProviderRegistry<EmbeddingProvider>({
  variable: 'EMBEDDING_PROVIDER',
  select: (config) => config.embeddings.provider,
  accepted: EMBEDDING_PROVIDERS,
  providers: EMBEDDING_PROVIDER_CLASSES,
});

export function createEmbeddingProvider(config: AppConfig): EmbeddingProvider {
  return EMBEDDING_PROVIDER_REGISTRY.create(config);
}
