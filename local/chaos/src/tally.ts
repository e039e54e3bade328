/** A count of things found, with the first few named: what every check's detail shows. */
export class Tally {
  count = 0;
  readonly names: string[] = [];
  readonly #limit: number;

  constructor(limit = Number.POSITIVE_INFINITY) {
    this.#limit = limit;
  }

  add(name: string): void {
    this.count += 1;
    if (this.names.length < this.#limit) this.names.push(name);
  }

  /** The names, and how many more there are: `a; b; and 3 more`. */
  describe(): string {
    const more = this.count - this.names.length;
    return [...this.names, ...(more > 0 ? [`and ${more} more`] : [])].join("; ");
  }
}
