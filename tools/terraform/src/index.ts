export {
  body,
  expression,
  type HclBlock,
  type HclConfig,
  names,
  parseDirectory,
  parseFile,
  TERRAFORM_ROOT,
  terraformDirectories,
} from "./hcl.js";
