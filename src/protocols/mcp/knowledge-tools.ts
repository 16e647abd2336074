import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MAX_NAMED_COLLECTIONS, NAMED_COLLECTION_MAX_LENGTH } from '../../common/collection-ids.js';
import { hasVisibleCharacter, storableTextProblem } from '../../common/storable-text.js';
import { COLLECTION_PAGE_MAX, SEARCH_QUERY_MAX_LENGTH, SEARCH_TOP_K_MAX } from '../../knowledge/public-api.js';

/** A string PostgreSQL stores unchanged (no NUL, no lone surrogate): the rule of IsStorableText on the REST routes. */
const storableString = () =>
  z.string().superRefine((value, context) => {
    const problem = storableTextProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });

export const searchKnowledgeArguments = z.strictObject({
  query: storableString()
    .min(1)
    .max(SEARCH_QUERY_MAX_LENGTH)
    .refine(hasVisibleCharacter, 'must contain visible text (not only white space or invisible characters)')
    .describe('What to search for: a question or keywords'),
  collection_ids: z
    .array(z.string().max(NAMED_COLLECTION_MAX_LENGTH))
    .min(1)
    .max(MAX_NAMED_COLLECTIONS)
    .nullable()
    .optional()
    .describe('Collections to search (ids from list_collections, or "default"); absent or null: every collection you can read'),
  top_k: z.number().int().min(1).max(SEARCH_TOP_K_MAX).optional().describe('How many passages to return (the service default when absent)'),
});

export const listCollectionsArguments = z.strictObject({
  limit: z.number().int().min(1).max(COLLECTION_PAGE_MAX).optional().describe('Collections per page (default 100)'),
  cursor: storableString().max(200).optional().describe('The next_cursor of a previous page'),
});

export const getChunkArguments = z.strictObject({
  chunk_id: storableString().min(1).max(40).describe('A chunk id, as chunk_id of a search_knowledge result'),
});

const location = z
  .object({ sheet: z.string().optional(), row: z.number().optional(), heading_path: z.array(z.string()).optional() })
  .nullable()
  .describe('Sheet and row of a spreadsheet row, or heading path of a passage; null: nothing more than the page');

export const searchKnowledgeResult = z.object({
  results: z.array(
    z.object({
      chunk_id: z.string(),
      document: z.string().describe("The document's title: its first heading, else its file name without extension"),
      collection_id: z.string(),
      source: z.string().describe("The document's file name"),
      page: z.number().int().nullable(),
      score: z.number().nullable(),
      text: z.string(),
    }),
  ),
});

export const listCollectionsResult = z.object({
  collections: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      description: z.string(),
      role: z.enum(['viewer', 'editor', 'owner']).describe("The caller's role on it"),
      document_count: z.number().int(),
      created_at: z.string(),
      updated_at: z.string(),
    }),
  ),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last'),
});

const passage = { chunk_id: z.string(), text: z.string(), page: z.number().int().nullable(), location };

export const getChunkResult = z.object({
  ...passage,
  collection_id: z.string(),
  document: z.object({ id: z.string(), filename: z.string() }),
  before: z.array(z.object(passage)).describe('The chunks just before it in its document, in document order'),
  after: z.array(z.object(passage)).describe('The chunks just after it in its document, in document order'),
});

/** A zod schema as the JSON Schema object tools/list gives (MCP wants `type: "object"` at the top). */
function jsonSchema(schema: z.ZodType): Tool['inputSchema'] {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest as Tool['inputSchema'];
}

export const SEARCH_KNOWLEDGE = 'search_knowledge';
export const LIST_COLLECTIONS = 'list_collections';
export const GET_CHUNK = 'get_chunk';

/** The tools tools/list answers: the knowledge base, read-only, under the caller's access. */
export const KNOWLEDGE_TOOLS: Tool[] = [
  {
    name: SEARCH_KNOWLEDGE,
    title: 'Search the knowledge base',
    description:
      'Hybrid search (full text and dense, fused and reranked) over the knowledge collections you can read. ' +
      'Returns the best passages with their document, file, page and score; cite them by chunk_id (get_chunk shows one in context).',
    inputSchema: jsonSchema(searchKnowledgeArguments),
    outputSchema: jsonSchema(searchKnowledgeResult) as Tool['outputSchema'],
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: LIST_COLLECTIONS,
    title: 'List knowledge collections',
    description: 'The knowledge collections you can read, oldest first, with your role and their number of documents.',
    inputSchema: jsonSchema(listCollectionsArguments),
    outputSchema: jsonSchema(listCollectionsResult) as Tool['outputSchema'],
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: GET_CHUNK,
    title: 'Read a passage in context',
    description: 'A passage (chunk) by its id: its text, document, page or location, and up to two passages before and after it.',
    inputSchema: jsonSchema(getChunkArguments),
    outputSchema: jsonSchema(getChunkResult) as Tool['outputSchema'],
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
];

/** Longest message of an InvalidParams error: a problem may quote a key the client sent, which may be huge. */
const MAX_PROBLEM_LENGTH = 500;

/** Why the arguments do not fit their schema, one clause a problem ("query: Too big: …; top_k: …"). */
export function argumentProblems(error: z.ZodError): string {
  const text = error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : 'arguments'}: ${issue.message}`).join('; ');
  return text.length > MAX_PROBLEM_LENGTH ? `${text.slice(0, MAX_PROBLEM_LENGTH)}…` : text;
}
