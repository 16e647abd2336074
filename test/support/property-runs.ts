/**
 * How many cases a fast-check property runs. Each property names its everyday count (about 200 for the unit
 * tier, fewer where one case is a round trip through the app); PROPERTY_RUNS=<n> sets every property to n cases,
 * for a deeper search before a release or while hunting a bug.
 */
export function propertyRuns(everyday: number): number {
  const wanted = process.env.PROPERTY_RUNS;
  if (wanted === undefined || wanted === '') return everyday;
  const runs = Number(wanted);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`PROPERTY_RUNS must be a positive whole number, not "${wanted}"`);
  return runs;
}
