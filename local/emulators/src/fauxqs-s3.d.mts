/** fauxqs with S3's object tags and `If-None-Match: *` on PutObject (fauxqs-s3.mjs). */
export function startFauxqsWithS3Fidelity(): Promise<{ readonly address: string; stop(): Promise<void> }>;
