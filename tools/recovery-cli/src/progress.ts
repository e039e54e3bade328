/** A progress bar for a terminal: `[#####-----] 5/10`. */
export function progressBar(done: number, total: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.min(width, Math.round((done / total) * width));
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`;
}
