/** PostgreSQL's unique_violation (23505), from either driver: the row another writer made first. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
