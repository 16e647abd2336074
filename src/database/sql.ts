import { DataSource, EntityManager, QueryResult } from 'typeorm';

/**
 * Runs raw SQL and returns its rows, whatever the statement (TypeORM's plain
 * `query()` answers UPDATE/DELETE ... RETURNING with [rows, count]). Inside a
 * transaction pass its EntityManager so the statement joins it.
 */
export async function sqlRows<T>(db: DataSource | EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  const manager = db instanceof DataSource ? db.manager : db;
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    const result = (await runner.query(sql, params, true)) as QueryResult<T>;
    return result.records;
  } finally {
    if (!manager.queryRunner) await runner.release();
  }
}

/** The PostgreSQL error code (SQLSTATE) of a failed query, as TypeORM reports it. */
export function pgErrorCode(error: unknown): string | undefined {
  return (error as { driverError?: { code?: string } })?.driverError?.code;
}

/** Whether a failed query broke a unique constraint (PostgreSQL 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return pgErrorCode(error) === '23505';
}

/** Whether a failed query broke a foreign key (PostgreSQL 23503): say, a row naming a collection deleted meanwhile. */
export function isForeignKeyViolation(error: unknown): boolean {
  return pgErrorCode(error) === '23503';
}

/** A name as a quoted SQL identifier ("a""b"). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
