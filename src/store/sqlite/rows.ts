/** The SQL placeholders for a list of `count` values: `?,?,?`. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(',');
}
