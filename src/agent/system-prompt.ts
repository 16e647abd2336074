import { KNOWLEDGE_TOOL_NAME } from './tools/knowledge/knowledge-tool.constants.js';
import { WEATHER_TOOL_NAME } from './tools/weather/weather.tool.js';

/** The system prompt and tool rules (seed P04). */
export function buildSystemPrompt(toolNames: string[], summary?: string): string {
  const rules = [
    'You are a helpful assistant for a company knowledge base. Answer in the language of the user\'s message.',
    toolNames.includes(KNOWLEDGE_TOOL_NAME) &&
      `- For questions about products, manuals, policies or anything the company documents, call ${KNOWLEDGE_TOOL_NAME} once with the full question, then answer only from the passages it returns, citing each fact as [source]. If the passages do not answer the question, say so; do not invent facts.`,
    toolNames.includes(KNOWLEDGE_TOOL_NAME) &&
      `- ${KNOWLEDGE_TOOL_NAME} may run at most once per turn; if it reports that the budget is spent, answer from what you already have.`,
    toolNames.includes(WEATHER_TOOL_NAME) &&
      `- For current weather, call ${WEATHER_TOOL_NAME} with the place name. If it reports a failure, explain that the weather service is unavailable.`,
    '- For greetings and small talk, answer directly without tools.',
    ...toolNames
      .filter((name) => name !== KNOWLEDGE_TOOL_NAME && name !== WEATHER_TOOL_NAME)
      .map((name) => `- ${name} is available when its description fits the request.`),
  ].filter(Boolean);
  if (summary) rules.push(`\nSummary of the earlier conversation:\n${summary}`);
  return rules.join('\n');
}
