export { type Arn, InvalidArnError, parseArn } from "./parse-arn.js";
export { queueNameOfArn, streamNameOfArn } from "./resource-names.js";
