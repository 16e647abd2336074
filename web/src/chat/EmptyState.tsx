import { useEffect, useState } from 'react';
import { api, type Schemas } from '../api';
import type { CollectionInfo } from '../knowledge/collections';

type KnowledgeDocument = Schemas['KnowledgeDocumentInfo'];

/** Documents listed per collection (its newest), and examples asked of the knowledge base. */
const DOCUMENTS_PER_COLLECTION = 20;
const EXAMPLES = 3;

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/;

/** A question about a document, in the language of its title. */
export function exampleQuestion(title: string): string {
  return CJK.test(title) ? `${title}的主要内容是什么？` : `What does “${title}” cover?`;
}

/**
 * What an empty chat offers: the documents the user can ask about (by title,
 * from each readable collection's listing) and a few example questions drawn
 * from their titles; clicking one asks it.
 */
export function EmptyState({ collections, onAsk }: { collections: CollectionInfo[] | null; onAsk: (question: string) => void }) {
  const [documents, setDocuments] = useState<KnowledgeDocument[] | null>(null);
  useEffect(() => {
    if (!collections) return;
    let current = true;
    void Promise.all(
      collections
        .filter((collection) => collection.document_count > 0)
        .map(async (collection) => {
          const { data } = await api.GET('/api/knowledge/collections/{id}/documents', {
            params: { path: { id: collection.id }, query: { limit: DOCUMENTS_PER_COLLECTION } },
          });
          return data?.documents ?? [];
        }),
    ).then((lists) => {
      if (current) setDocuments(lists.flat());
    });
    return () => {
      current = false;
    };
  }, [collections]);

  const more = (collections ?? []).reduce((sum, collection) => sum + collection.document_count, 0) - (documents?.length ?? 0);
  const examples = [...new Set((documents ?? []).map((document) => document.title))].slice(0, EXAMPLES).map(exampleQuestion);
  return (
    <div className="empty">
      <h2>Ask the knowledge base</h2>
      <p>Answers cite the passages they come from; “Show trace” explains how they were found. 中文和英文都可以。</p>
      {documents && documents.length === 0 && <p className="muted">The knowledge base holds no document you can read yet.</p>}
      {documents && documents.length > 0 && (
        <>
          <h3>What it holds</h3>
          <ul className="empty-documents" aria-label="Documents you can ask about">
            {documents.map((document) => (
              <li key={document.id} title={document.filename}>
                {document.title}
              </li>
            ))}
          </ul>
          {more > 0 && <p className="muted small">and {more} more</p>}
          <div role="group" aria-label="Example questions" className="empty-examples">
            {examples.map((question) => (
              <button key={question} type="button" onClick={() => onAsk(question)}>
                {question}
              </button>
            ))}
          </div>
        </>
      )}
    </div>
  );
}
