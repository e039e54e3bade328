/**
 * IAM policy documents as AWS evaluates them, for the requests the checks ask about: explicit deny wins,
 * then an allow, otherwise the request is implicitly denied. Actions and resources match IAM's patterns
 * (`*` any run of characters, `?` one; actions case-insensitively). Only what the repository's policies
 * use is understood; a statement with an element or a condition operator outside that is refused
 * (UnsupportedPolicyError), never guessed at, so a check cannot pass on a policy it did not read.
 */

export type Strings = string | readonly string[];

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: "Allow" | "Deny";
  readonly Action?: Strings;
  readonly NotAction?: Strings;
  readonly Resource?: Strings;
  readonly NotResource?: Strings;
  /** A resource policy's; `"*"` or `{ AWS: [...] }` (`{ "*": ... }` is read as everyone). */
  readonly Principal?: "*" | Readonly<Record<string, Strings>>;
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, Strings>>>>;
}

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: PolicyStatement | readonly PolicyStatement[];
}

/** One request: who asks (for a resource policy), what, on what, and the request's condition keys. */
export interface PolicyRequest {
  readonly action: string;
  readonly resource: string;
  readonly principalArn?: string;
  /** Condition keys present in the request, lower-cased (`aws:principalarn`, `s3:if-none-match`...). */
  readonly context?: Readonly<Record<string, string>>;
}

export type Decision = "allowed" | "explicitly-denied" | "implicitly-denied";

export class UnsupportedPolicyError extends Error {
  override readonly name = "UnsupportedPolicyError";
  constructor(
    readonly sid: string,
    what: string,
  ) {
    super(
      `statement ${sid}: ${what} is not understood by the check; extend tools/terraform/src/tf-check/permissions/policy.ts`,
    );
  }
}

export const list = (value: Strings | undefined): readonly string[] =>
  value === undefined ? [] : typeof value === "string" ? [value] : value;

export function statementsOf(document: PolicyDocument): readonly PolicyStatement[] {
  return Array.isArray(document.Statement)
    ? (document.Statement as readonly PolicyStatement[])
    : [document.Statement as PolicyStatement];
}

/** IAM's `*` and `?` wildcards; everything else literal. */
export function matchesPattern(pattern: string, value: string, caseInsensitive = false): boolean {
  const source = pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[\\^$.|+()[\]{}]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, caseInsensitive ? "is" : "s").test(value);
}

const SUPPORTED_CONDITIONS = new Set([
  "StringEquals",
  "StringNotEquals",
  "ArnEquals",
  "ArnLike",
  "ArnNotEquals",
  "ArnNotLike",
  "Bool",
  "Null",
]);

function conditionHolds(
  sid: string,
  operator: string,
  key: string,
  values: readonly string[],
  context: Readonly<Record<string, string>>,
): boolean {
  if (!SUPPORTED_CONDITIONS.has(operator))
    throw new UnsupportedPolicyError(sid, `condition operator ${operator}`);
  const present = context[key.toLowerCase()];
  if (operator === "Null") return values.some((v) => (v === "true") === (present === undefined));
  // A negated operator holds when the key is absent, as in IAM (there is nothing to equal).
  const negated = operator.includes("Not");
  if (present === undefined) return negated;
  const like = operator.startsWith("Arn") || operator === "StringLike";
  const equal = values.some((v) => (like ? matchesPattern(v, present) : v === present));
  if (operator === "Bool") return values.some((v) => v.toLowerCase() === present.toLowerCase());
  return negated ? !equal : equal;
}

function principalMatches(statement: PolicyStatement, principalArn: string | undefined): boolean {
  const principal = statement.Principal;
  if (principal === undefined) return true;
  if (principal === "*") return true;
  const all = Object.entries(principal).flatMap(([, v]) => list(v));
  return (
    all.includes("*") || (principalArn !== undefined && all.some((p) => matchesPattern(p, principalArn)))
  );
}

/** Whether a statement applies to the request (its effect aside). */
export function statementApplies(statement: PolicyStatement, request: PolicyRequest): boolean {
  const sid = statement.Sid ?? "(no sid)";
  if (statement.NotAction !== undefined) throw new UnsupportedPolicyError(sid, "NotAction");
  if (statement.NotResource !== undefined) throw new UnsupportedPolicyError(sid, "NotResource");
  if (!list(statement.Action).some((a) => matchesPattern(a, request.action, true))) return false;
  if (!list(statement.Resource).some((r) => matchesPattern(r, request.resource))) return false;
  if (!principalMatches(statement, request.principalArn)) return false;
  const context = {
    ...(request.principalArn !== undefined ? { "aws:principalarn": request.principalArn } : {}),
    ...request.context,
  };
  for (const [operator, keys] of Object.entries(statement.Condition ?? {}))
    for (const [key, values] of Object.entries(keys))
      if (!conditionHolds(sid, operator, key, list(values), context)) return false;
  return true;
}

/** AWS's order for one request: an explicit deny in any document wins, then any allow. */
export function decide(documents: readonly PolicyDocument[], request: PolicyRequest): Decision {
  const statements = documents.flatMap(statementsOf);
  if (statements.some((s) => s.Effect === "Deny" && statementApplies(s, request))) return "explicitly-denied";
  return statements.some((s) => s.Effect === "Allow" && statementApplies(s, request))
    ? "allowed"
    : "implicitly-denied";
}
