/** A row id (decimal text) as a number to bind, or `undefined` for text that is none: it matches no row. */
export function rowId(id: string): number | undefined {
  return /^\d{1,15}$/.test(id) ? Number(id) : undefined;
}

/** The row ids among `ids` (see {@link rowId}). */
export function rowIds(ids: readonly string[]): number[] {
  return ids.flatMap((id) => rowId(id) ?? []);
}
