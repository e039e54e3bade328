export { type Arn, InvalidArnError, parseArn } from "./parse-arn.js";
export { queueNameOfArn, queueUrlOfArn, streamNameOfArn } from "./resource-names.js";
