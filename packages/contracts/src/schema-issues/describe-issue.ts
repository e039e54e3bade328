/**
 * An issue as zod reports it (`z.core.$ZodIssue` has this shape), or as a validator written to
 * zod's shape does: the keys from the root to the offending value, and what is wrong with it.
 * Structural, so this package needs no zod.
 */
export interface PathIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** An issue with its path written out: `items.0.id`, or the root's label. */
export interface DottedIssue {
  readonly path: string;
  readonly message: string;
}

/** What an empty path is called when none is given: the document itself. */
export const ROOT = "(root)";

/** `items.0.id`; the root's label for an empty path (`(root)`, or e.g. `(env)` for an environment). */
export function issuePath(path: readonly PropertyKey[], root: string = ROOT): string {
  if (root.length === 0) throw new RangeError("issuePath: the root label must not be empty");
  return path.length === 0 ? root : path.map(String).join(".");
}

export function dottedIssue(issue: PathIssue, root: string = ROOT): DottedIssue {
  return { path: issuePath(issue.path, root), message: issue.message };
}

/** `path: message`, one line per issue in the errors that list them. */
export function describeIssue(issue: PathIssue, root: string = ROOT): string {
  return `${issuePath(issue.path, root)}: ${issue.message}`;
}
