// Formats the dashboard shares with eddy's command line.

// duration writes a duration in milliseconds for a person: how far a
// watermark is behind the clock, how long the node has been up. The larger
// the duration, the coarser the units, two at most: 250ms under a second,
// 12.3s (tenths) under a minute, 4m05s under an hour, 3h04m under a day,
// 3d04h under ten days, and 1,112 days past that, where the hours no longer
// matter (a watermark that far behind is stuck or replaying old records).
// Every unit is truncated, not rounded; a negative duration (a watermark
// ahead of the clock) gets a minus sign. eddy status writes durations by
// the same rule (formatDuration in cmd/eddy/status.go); both are checked
// against the cases in testdata/durations.json.
export function duration(ms) {
  const sign = ms < 0 ? "-" : "";
  ms = Math.trunc(Math.abs(ms));
  const SECOND = 1000, MINUTE = 60 * SECOND, HOUR = 60 * MINUTE, DAY = 24 * HOUR;
  const two = (n) => String(n).padStart(2, "0");
  const q = (a, b) => Math.floor(a / b);
  if (ms < SECOND) return `${sign}${ms}ms`;
  if (ms < MINUTE) return `${sign}${q(ms, SECOND)}.${q(ms % SECOND, 100)}s`;
  if (ms < HOUR) return `${sign}${q(ms, MINUTE)}m${two(q(ms % MINUTE, SECOND))}s`;
  if (ms < DAY) return `${sign}${q(ms, HOUR)}h${two(q(ms % HOUR, MINUTE))}m`;
  if (ms < 10 * DAY) return `${sign}${q(ms, DAY)}d${two(q(ms % DAY, HOUR))}h`;
  return `${sign}${new Intl.NumberFormat("en-US").format(q(ms, DAY))} days`;
}
