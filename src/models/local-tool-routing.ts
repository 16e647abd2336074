/**
 * How the offline model (LLM_PROVIDER=local) uses a tool it cannot
 * understand: a tool that wants to be called by it declares a routing hint
 * in its LangChain `metadata` under LOCAL_ROUTING_KEY. The model asks each
 * bound tool's hint, highest priority first, and the first that claims the
 * message decides; after the call, the same hint composes the answer from
 * the tool's output.
 */
export const LOCAL_ROUTING_KEY = 'local_routing';

/**
 * An answer the offline model gives from a tool's output: one text, or one
 * per language, of which the model takes the question's. A single text in
 * English for a Chinese question is framed by a Chinese sentence naming the
 * tool; better to give both.
 */
export type LocalAnswer = string | { en: string; zh: string };

export type LocalRoute =
  /** Call the tool with these arguments. */
  | { call: Record<string, unknown> }
  /** The message is for this tool but lacks something: answer with this question instead. */
  | { ask: string };

export interface LocalToolRouting {
  /** Higher is asked first; a catch-all (such as a knowledge search) takes the lowest. */
  priority: number;
  /** What the tool can do, for the model's greeting: `en` and `zh` phrases ("check the weather", "查询天气"). */
  capability: { en: string; zh: string };
  /** The route for this message, or null when it is not for this tool. */
  route(message: string): LocalRoute | null;
  /** The answer to the user's question from the tool's (successful) output: one text, or `en` and `zh` texts. */
  compose(question: string, output: string): LocalAnswer;
}

export function isLocalToolRouting(value: unknown): value is LocalToolRouting {
  const hint = value as Partial<LocalToolRouting> | null;
  return (
    typeof hint === 'object' &&
    hint !== null &&
    typeof hint.priority === 'number' &&
    typeof hint.route === 'function' &&
    typeof hint.compose === 'function' &&
    typeof hint.capability?.en === 'string' &&
    typeof hint.capability?.zh === 'string'
  );
}
