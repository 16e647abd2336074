/**
 * Resolves once `check` holds, looking every 50 ms: for states nothing announces (a PostgreSQL backend starting to
 * wait for a lock, the HTTP server's connection count). A condition that never comes is caught by Jest's test timeout.
 */
export const until = async (check: () => boolean | Promise<boolean>): Promise<void> => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
};
