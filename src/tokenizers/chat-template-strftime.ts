// strftime_now for chat templates: Python's datetime.now().strftime(format) in the C
// locale (transformers registers it as a template global). Templates such as Llama 3.1's
// print today's date; the clock is injectable so tests freeze it on both sides.
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

const pad = (value: number, width = 2) => String(value).padStart(width, "0");

/** Formats a date's UTC fields (Workers run in UTC) like Python's strftime. */
export function strftime(date: Date, format: string): string {
  const hours = date.getUTCHours();
  const startOfYear = Date.UTC(date.getUTCFullYear(), 0, 1);
  const dayOfYear = Math.floor((date.getTime() - startOfYear) / 86_400_000) + 1;
  const fields: Record<string, string> = {
    a: (DAYS[date.getUTCDay()] ?? "").slice(0, 3),
    A: DAYS[date.getUTCDay()] ?? "",
    b: (MONTHS[date.getUTCMonth()] ?? "").slice(0, 3),
    B: MONTHS[date.getUTCMonth()] ?? "",
    d: pad(date.getUTCDate()),
    "-d": String(date.getUTCDate()),
    m: pad(date.getUTCMonth() + 1),
    "-m": String(date.getUTCMonth() + 1),
    y: pad(date.getUTCFullYear() % 100),
    Y: String(date.getUTCFullYear()),
    H: pad(hours),
    I: pad(hours % 12 === 0 ? 12 : hours % 12),
    M: pad(date.getUTCMinutes()),
    S: pad(date.getUTCSeconds()),
    p: hours < 12 ? "AM" : "PM",
    j: pad(dayOfYear, 3),
    "%": "%",
  };
  return format.replace(/%(-?[a-zA-Z%])/g, (directive, name: string) => fields[name] ?? directive);
}
