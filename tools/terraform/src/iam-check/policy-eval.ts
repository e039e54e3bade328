/**
 * IAM's policy evaluation, for the checks of `npm run iam:check` (docs/security.md, "The checks"): enough
 * of it to decide the questions those checks ask of the policies the roots render, and no guessing beyond.
 * A policy using a condition operator this file does not implement is refused with
 * UnsupportedPolicyError, so a check never passes because a condition was skipped.
 *
 * Semantics (AWS IAM User Guide, "Policy evaluation logic" and "IAM JSON policy elements: Condition
 * operators"): an explicit Deny in any policy wins; otherwise a request is allowed when an Allow
 * applies (and, for a principal with a permissions boundary, the boundary allows it too). Action names
 * match case-insensitively, resources case-sensitively, both with * and ? wildcards. A condition key
 * absent from the request makes a condition false, except for negated operators (StringNotEquals,
 * ArnNotLike...), which are then true, ...IfExists (true) and Null. ForAllValues over an absent or empty
 * set is true, ForAnyValue false.
 */

export type ContextValue = string | readonly string[];

export interface Request {
  readonly action: string;
  readonly resource: string;
  /** Condition keys and their values, e.g. {"iam:PermissionsBoundary": "arn:..."}; keys compare case-insensitively. */
  readonly context?: Readonly<Record<string, ContextValue>>;
  /** For resource and trust policies: the calling principal (a role ARN, a federated provider ARN, a service). */
  readonly principal?: Principal;
}

export type Principal =
  | { readonly kind: "AWS"; readonly arn: string; readonly account: string }
  | { readonly kind: "Federated"; readonly arn: string }
  | { readonly kind: "Service"; readonly name: string };

export interface Statement {
  readonly Sid?: string;
  readonly Effect: "Allow" | "Deny";
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly NotResource?: string | readonly string[];
  readonly Principal?: "*" | Readonly<Record<string, string | readonly string[]>>;
  readonly Condition?: Readonly<
    Record<string, Readonly<Record<string, string | boolean | readonly string[]>>>
  >;
}

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: Statement | readonly Statement[];
}

export type Decision = "allowed" | "explicit-deny" | "implicit-deny";

export class UnsupportedPolicyError extends Error {
  override readonly name = "UnsupportedPolicyError";
  constructor(
    readonly operator: string,
    readonly statement: Statement,
  ) {
    super(
      `condition operator ${operator} is not implemented by tools/terraform/src/iam-check/policy-eval.ts (statement ${statement.Sid ?? "without Sid"}): refusing to judge the policy`,
    );
  }
}

const list = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as readonly T[]) : [value as T];

export const statements = (doc: PolicyDocument): readonly Statement[] => list(doc.Statement);

/** IAM's wildcard match: * any run of characters (including none), ? exactly one. */
export function wildcardMatch(pattern: string, value: string, ignoreCase = false): boolean {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`, ignoreCase ? "is" : "s").test(value);
}

const actionMatches = (s: Statement, action: string): boolean =>
  s.Action !== undefined
    ? list(s.Action).some((p) => wildcardMatch(p, action, true))
    : !list(s.NotAction).some((p) => wildcardMatch(p, action, true));

const resourceMatches = (s: Statement, resource: string): boolean => {
  if (s.Resource === undefined && s.NotResource === undefined) return true; // trust policies
  return s.Resource !== undefined
    ? list(s.Resource).some((p) => wildcardMatch(p, resource))
    : !list(s.NotResource).some((p) => wildcardMatch(p, resource));
};

function principalMatches(s: Statement, principal: Principal | undefined): boolean {
  if (s.Principal === undefined) return true; // identity policies
  if (principal === undefined) return false;
  if (s.Principal === "*") return true;
  const entries = s.Principal as Record<string, string | readonly string[]>;
  if (principal.kind === "Service") return list(entries.Service).includes(principal.name);
  if (principal.kind === "Federated") return list(entries.Federated).includes(principal.arn);
  return list(entries.AWS).some(
    (p) =>
      p === "*" ||
      p === principal.arn ||
      // The account (its root or its id) stands for every principal of the account that IAM allows.
      p === principal.account ||
      p === `arn:aws:iam::${principal.account}:root`,
  );
}

function contextValue(request: Request, key: string): readonly string[] | undefined {
  const context = request.context ?? {};
  const found = Object.keys(context).find((k) => k.toLowerCase() === key.toLowerCase());
  if (found === undefined) return undefined;
  return list(context[found]);
}

type Base = (policyValue: string, value: string) => boolean;

const BASE: Record<string, { match: Base; negated: boolean }> = {
  StringEquals: { match: (p, v) => p === v, negated: false },
  StringNotEquals: { match: (p, v) => p === v, negated: true },
  StringEqualsIgnoreCase: { match: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: false },
  StringNotEqualsIgnoreCase: { match: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: true },
  StringLike: { match: (p, v) => wildcardMatch(p, v), negated: false },
  StringNotLike: { match: (p, v) => wildcardMatch(p, v), negated: true },
  ArnEquals: { match: (p, v) => p === v, negated: false },
  ArnNotEquals: { match: (p, v) => p === v, negated: true },
  ArnLike: { match: (p, v) => wildcardMatch(p, v), negated: false },
  ArnNotLike: { match: (p, v) => wildcardMatch(p, v), negated: true },
  Bool: { match: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: false },
};

function conditionHolds(
  statement: Statement,
  operator: string,
  key: string,
  policyValues: readonly string[],
  request: Request,
): boolean {
  const values = contextValue(request, key);
  if (operator === "Null") {
    const absent = values === undefined || values.length === 0;
    return policyValues.every((p) => (p.toLowerCase() === "true") === absent);
  }
  const set = /^(ForAnyValue|ForAllValues):(.+)$/.exec(operator);
  const name = set ? (set[2] as string) : operator;
  const ifExists = name.endsWith("IfExists");
  const base = BASE[ifExists ? name.slice(0, -"IfExists".length) : name];
  if (base === undefined) throw new UnsupportedPolicyError(operator, statement);
  // A context value satisfies the operator when it matches one of the policy's values (negated: none).
  const satisfies = (v: string) => policyValues.some((p) => base.match(p, v)) !== base.negated;
  if (set?.[1] === "ForAnyValue") return values?.some(satisfies) ?? false;
  if (set?.[1] === "ForAllValues") return values === undefined || values.every(satisfies);
  if (values === undefined || values.length === 0) return ifExists || base.negated;
  return base.negated ? values.every(satisfies) : values.some(satisfies);
}

function conditionsHold(statement: Statement, request: Request): boolean {
  for (const [operator, keys] of Object.entries(statement.Condition ?? {}))
    for (const [key, value] of Object.entries(keys)) {
      const policyValues = list(value as string | boolean | readonly string[]).map(String);
      if (!conditionHolds(statement, operator, key, policyValues, request)) return false;
    }
  return true;
}

/** Whether `statement` applies to `request` (its effect aside). */
export function applies(statement: Statement, request: Request): boolean {
  return (
    actionMatches(statement, request.action) &&
    resourceMatches(statement, request.resource) &&
    principalMatches(statement, request.principal) &&
    conditionsHold(statement, request)
  );
}

/** One set of policies of one kind (a principal's identity policies, a boundary, a resource's policy). */
export function decide(documents: readonly PolicyDocument[], request: Request): Decision {
  let allowed = false;
  for (const doc of documents)
    for (const s of statements(doc)) {
      if (!applies(s, request)) continue;
      if (s.Effect === "Deny") return "explicit-deny";
      allowed = true;
    }
  return allowed ? "allowed" : "implicit-deny";
}

/**
 * Identity-based evaluation for one principal in its own account: explicit denies anywhere, then an
 * Allow of its policies, within its permissions boundary when it has one.
 */
export function identityDecision(
  policies: readonly PolicyDocument[],
  request: Request,
  boundary?: readonly PolicyDocument[],
): Decision {
  const identity = decide(policies, request);
  const limit = boundary === undefined ? "allowed" : decide(boundary, request);
  if (identity === "explicit-deny" || limit === "explicit-deny") return "explicit-deny";
  return identity === "allowed" && limit === "allowed" ? "allowed" : "implicit-deny";
}

/**
 * A KMS key (AWS KMS Developer Guide, "Key policies"): its key policy is the only door. A principal is
 * allowed when the key policy allows it by name, or when the key policy allows the account (its root)
 * and the principal's IAM policies allow it; an explicit deny in either wins.
 */
export function kmsDecision(
  keyPolicy: PolicyDocument,
  principal: Extract<Principal, { kind: "AWS" }>,
  policies: readonly PolicyDocument[],
  request: Omit<Request, "principal">,
): Decision {
  const byName = decide([keyPolicy], { ...request, principal: { ...principal, account: "" } });
  const byAccount = decide([keyPolicy], {
    ...request,
    principal: { kind: "AWS", arn: `arn:aws:iam::${principal.account}:root`, account: principal.account },
  });
  const identity = decide(policies, request);
  if ([byName, byAccount, identity].includes("explicit-deny")) return "explicit-deny";
  if (byName === "allowed") return "allowed";
  return byAccount === "allowed" && identity === "allowed" ? "allowed" : "implicit-deny";
}
