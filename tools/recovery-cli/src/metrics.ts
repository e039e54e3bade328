/**
 * What only CloudWatch knows: the processor's IteratorAge, each queue's ApproximateAgeOfOldestMessage
 * (the metrics the alarms of terraform/modules/alarms watch), and which of the environment's alarms fire.
 */
import {
  type CloudWatchClient,
  DescribeAlarmsCommand,
  GetMetricDataCommand,
  type MetricDataQuery,
} from "@aws-sdk/client-cloudwatch";

/** The latest of a metric's 1-minute maxima over the last `windowMinutes`, or nothing if none was emitted. */
export interface MetricReading {
  readonly value: number;
  readonly at: number;
}

export interface MetricRequest {
  readonly id: string;
  readonly namespace: string;
  readonly metric: string;
  readonly dimension: readonly [string, string];
}

export async function latestMaxima(
  cloudwatch: CloudWatchClient,
  requests: readonly MetricRequest[],
  options: { readonly now: number; readonly windowMinutes?: number },
): Promise<ReadonlyMap<string, MetricReading>> {
  const queries: MetricDataQuery[] = requests.map((r) => ({
    // GetMetricData ids start with a lower-case letter and hold letters, digits and underscores.
    Id: `m${r.id.replace(/[^A-Za-z0-9_]/g, "_")}`,
    Label: r.id,
    MetricStat: {
      Metric: {
        Namespace: r.namespace,
        MetricName: r.metric,
        Dimensions: [{ Name: r.dimension[0], Value: r.dimension[1] }],
      },
      Period: 60,
      Stat: "Maximum",
    },
  }));
  const readings = new Map<string, MetricReading>();
  const windowMs = (options.windowMinutes ?? 10) * 60_000;
  for (let i = 0; i < queries.length; i += 500) {
    let token: string | undefined;
    do {
      const page = await cloudwatch.send(
        new GetMetricDataCommand({
          MetricDataQueries: queries.slice(i, i + 500),
          StartTime: new Date(options.now - windowMs),
          EndTime: new Date(options.now + 60_000),
          ScanBy: "TimestampDescending",
          ...(token ? { NextToken: token } : {}),
        }),
      );
      for (const result of page.MetricDataResults ?? []) {
        const id = requests[queries.findIndex((q) => q.Id === result.Id)]?.id;
        const timestamps = result.Timestamps ?? [];
        const values = result.Values ?? [];
        if (id === undefined || values.length === 0) continue;
        // Newest first (ScanBy); keep the newest reading of all pages.
        let newest = 0;
        for (let j = 1; j < timestamps.length; j++)
          if ((timestamps[j]?.getTime() ?? 0) > (timestamps[newest]?.getTime() ?? 0)) newest = j;
        const at = timestamps[newest]?.getTime() ?? 0;
        const previous = readings.get(id);
        if (previous === undefined || at > previous.at) readings.set(id, { value: values[newest] ?? 0, at });
      }
      token = page.NextToken;
    } while (token);
  }
  return readings;
}

export interface FiringAlarm {
  readonly name: string;
  readonly reason: string;
  readonly description: string;
}

/** The alarms whose names start with `prefix-` that are in ALARM now. */
export async function firingAlarms(cloudwatch: CloudWatchClient, prefix: string): Promise<FiringAlarm[]> {
  const alarms: FiringAlarm[] = [];
  let token: string | undefined;
  do {
    const page = await cloudwatch.send(
      new DescribeAlarmsCommand({
        AlarmNamePrefix: `${prefix}-`,
        StateValue: "ALARM",
        ...(token ? { NextToken: token } : {}),
      }),
    );
    for (const a of page.MetricAlarms ?? [])
      alarms.push({
        name: a.AlarmName ?? "",
        reason: a.StateReason ?? "",
        description: a.AlarmDescription ?? "",
      });
    token = page.NextToken;
  } while (token);
  return alarms;
}
