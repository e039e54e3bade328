export {
  type DottedIssue,
  describeIssue,
  dottedIssue,
  issuePath,
  type PathIssue,
  ROOT,
} from "./describe-issue.js";
