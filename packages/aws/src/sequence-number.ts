/**
 * Kinesis sequence numbers are decimal strings of up to 128 digits, too long for a number: compare by
 * length, then as text.
 */
export function compareSequenceNumbers(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}
