/** The system prompt: the core rules, then each tool's own rules, then the conversation summary. */
export function buildSystemPrompt(toolRules: readonly string[], summary?: string): string {
  const rules = [
    "You are a helpful assistant for a company knowledge base. Answer in the language of the user's message.",
    ...toolRules,
    '- For greetings and small talk, answer directly without tools.',
  ];
  if (summary) rules.push(`\nSummary of the earlier conversation:\n${summary}`);
  return rules.join('\n');
}
