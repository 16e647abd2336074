import { useEffect, useMemo, useRef } from 'react';
import Markdown, { defaultUrlTransform, type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import type { Schemas } from '../api';

type RagTrace = Schemas['RagTrace'];
type RetrievedChunk = Schemas['RetrievedChunk'];

/** A chunk a citation points at, as the trace viewer is focused on it. */
export interface CitedChunk {
  source: string;
  chunk_id?: string;
}

const CITE_SCHEME = 'cite:';
const SAFE_LINK = /^(https?:|mailto:)/i;
/** `[3]`, `[manual.md]`, `[manual.pdf p.2]` as the composer of answers writes them. */
const CITATION = /\[([^[\]\n]{1,200})\](?!\()/g;

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
}

/** Every chunk of a trace, the evidence the answer was composed from first (so `[n]` is the n-th of those). */
function chunksOf(trace: RagTrace): { numbered: RetrievedChunk[]; all: RetrievedChunk[] } {
  const numbered = trace.final_chunks?.length ? trace.final_chunks : (trace.hitl_chunks ?? []);
  const all = [
    ...numbered,
    ...(trace.final_chunks ?? []),
    ...(trace.hitl_chunks ?? []),
    ...(trace.initial_chunks ?? []),
    ...(trace.rewrite_chunks ?? []),
    ...(trace.sub_traces ?? []).flatMap((sub) => [...(sub.final_chunks ?? []), ...(sub.initial_chunks ?? [])]),
  ];
  return { numbered, all };
}

/** The chunk a citation label names in the trace, or null when it names none (then it stays text). */
export function resolveCitation(label: string, trace: RagTrace | null | undefined): RetrievedChunk | null {
  if (!trace) return null;
  const { numbered, all } = chunksOf(trace);
  const trimmed = label.trim();
  if (/^\d{1,3}$/.test(trimmed)) return numbered[Number(trimmed) - 1] ?? null;
  const paged = /^(.*\S)\s+p\.\s*(\d+)$/.exec(trimmed);
  const source = paged ? paged[1] : trimmed;
  const page = paged ? Number(paged[2]) : undefined;
  return all.find((c) => c.source === source && (page === undefined || c.page === page)) ?? all.find((c) => c.source === source) ?? null;
}

/** A remark plugin turning the citations the trace can resolve into `cite:` links; code and existing links are left alone. */
function remarkCitations(trace: RagTrace | null | undefined) {
  return () => (tree: MdNode) => {
    const walk = (node: MdNode) => {
      if (!node.children || node.type === 'link' || node.type === 'linkReference') return;
      node.children = node.children.flatMap((child) => {
        if (child.type !== 'text' || !child.value) {
          walk(child);
          return [child];
        }
        const parts: MdNode[] = [];
        let last = 0;
        for (const match of child.value.matchAll(CITATION)) {
          if (!resolveCitation(match[1], trace)) continue;
          if (match.index > last) parts.push({ type: 'text', value: child.value.slice(last, match.index) });
          parts.push({ type: 'link', url: CITE_SCHEME + encodeURIComponent(match[1]), children: [{ type: 'text', value: match[0] }] });
          last = match.index + match[0].length;
        }
        if (last === 0) return [child];
        if (last < child.value.length) parts.push({ type: 'text', value: child.value.slice(last) });
        return parts;
      });
    };
    walk(tree);
  };
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** Links: only http(s) and mailto survive (plus our own citation links); anything else loses its href. */
function urlTransform(url: string): string {
  if (url.startsWith(CITE_SCHEME)) return url;
  const safe = defaultUrlTransform(url);
  return SAFE_LINK.test(safe) ? safe : '';
}

/**
 * A message's text as Markdown. No raw HTML is ever rendered (react-markdown
 * without rehype-raw shows it as text), and citations the message's trace
 * resolves become buttons opening the trace viewer on their chunk.
 */
export function MessageBody({ content, trace, onCite }: { content: string; trace?: RagTrace | null; onCite?: (chunk: CitedChunk) => void }) {
  const plugins = useMemo(() => [remarkGfm, remarkCitations(trace)], [trace]);
  // The latest handler, read at the click: the components below must not change with it, or every render of the
  // conversation would remount the citation buttons (and the one that opened a panel could not get focus back).
  const onCiteRef = useRef(onCite);
  useEffect(() => {
    onCiteRef.current = onCite;
  });
  const components = useMemo<Components>(
    () => ({
      a({ href, children }) {
        if (href?.startsWith(CITE_SCHEME)) {
          // The model's own text may forge a cite: link; a malformed escape in it must not break the page.
          const label = safeDecode(href.slice(CITE_SCHEME.length));
          if (label === null) return <span>{children}</span>;
          const chunk = resolveCitation(label, trace);
          return (
            <button
              type="button"
              className="citation"
              title={chunk ? `Show ${chunk.source}${chunk.page ? ` p.${chunk.page}` : ''} in the trace` : undefined}
              onClick={() => chunk && onCiteRef.current?.({ source: chunk.source, chunk_id: chunk.chunk_id })}
            >
              {children}
            </button>
          );
        }
        if (!href) return <span>{children}</span>;
        return (
          <a href={href} target="_blank" rel="noopener noreferrer">
            {children}
          </a>
        );
      },
      img({ alt }) {
        // Images from model text are not fetched (no tracking pixels); the alt text stands in.
        return <span className="image-alt">{alt ? `[image: ${alt}]` : '[image]'}</span>;
      },
    }),
    [trace],
  );
  return (
    <div className="message-body">
      <Markdown remarkPlugins={plugins} components={components} urlTransform={urlTransform} skipHtml={false}>
        {content}
      </Markdown>
    </div>
  );
}
