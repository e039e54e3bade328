/** Standard queue: messages independently. FIFO: groups concurrently, each in order (§3). */
export const QueueMode = { Standard: "standard", Fifo: "fifo" } as const;
export type QueueMode = (typeof QueueMode)[keyof typeof QueueMode];
