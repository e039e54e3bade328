export const LifecycleEventType = {
  Requested: "tool_call.requested",
  Started: "tool_call.started",
  Completed: "tool_call.completed",
  Failed: "tool_call.failed",
} as const;
export type LifecycleEventType = (typeof LifecycleEventType)[keyof typeof LifecycleEventType];
