#!/usr/bin/env node
/**
 * Seeded synthetic card transactions in IBM TabFormer's raw schema.
 *
 *   node scripts/fraud/generate.mjs [--seed 20240611] [--users 4000]
 *     [--out .cache/fraud/transactions.csv]
 *
 * Columns: User,Card,Year,Month,Day,Time,Amount,Use Chip,Merchant Name,Merchant City, Merchant
 * State,Zip,MCC,Errors?,Is Fraud? (one row per transaction, calendar year 2019, all datetimes are
 * wall-clock values read as UTC; rows sorted by User, Card, time). PRNG: mulberry32(seed); the same
 * seed gives a byte-identical file.
 *
 * World: 48 US metro cities (+4 satellite towns each, ~120 merchants per city, ~20 per town), 10
 * foreign cities (Merchant State = country name, Zip empty) and 400 online merchants (Merchant City
 * "ONLINE", State and Zip empty). Merchant Name is a random signed 64-bit integer. 36 MCCs with a
 * typical ticket size each.
 *
 * Legit behaviour, per card (4,000 users with 1-3 cards sharing the home city):
 *   home city, 8-25 habitual local merchants (70% in the city, 30% in its towns), 2-6
 *   habitual online merchants; 0.1-0.6 transactions/day (Poisson per day); active hours
 *   ~ N(mean 9-19h, sd 2-4h); online share 5-30%; 12% of in-person purchases at a
 *   non-habitual merchant nearby; spend multiplier 0.5-2 on a log-normal (sd 0.6) around
 *   the MCC's typical ticket; 0.5% occasional big purchases (x4-x10); chip share 70-97%
 *   of in-person (rest swipe); trips ~Poisson(1.2)/year of 2-6 days to another US city
 *   (15% foreign) with hotel/restaurant/gas spending there; errors on 1.5% of rows
 *   (mostly Insufficient Balance / Bad PIN / Technical Glitch; each
 *   two/three-error combination ~0.1% of the errors, roughly TabFormer's proportions).
 *
 * Fraud patterns (every transaction of an episode is labelled "Yes"; the cardholder's own
 * transactions keep going in between):
 *   card-testing   p=4.0%/card: 4-12 online txns $0.01-$2.00 at NEW online merchants,
 *                  1-6 min apart, 35% with Bad CVV/Bad Expiration/Bad Card Number; 60% then
 *                  1-3 online purchases $150-$1500 (MCC 5732/5045/5311/4829) within 2 h.
 *   account-takeover p=3.5%/card: 4-12 txns over 1-2 days at NEW merchants in another
 *                  state (20% foreign, 60% online), hours 0-5 with p=0.6, amounts x5-x15 the
 *                  card's typical, risky MCCs (5732 5944 4829 5045 5311 5651), 12% Bad PIN
 *                  / Insufficient Balance.
 *   compromised-merchant: 20 popular local merchants are breached for 14-28 days; 60% of
 *                  cards that used one during its breach get, 3-40 days later, 2-8 SWIPE
 *                  (cloned mag-stripe) txns $40-$800 in another US city within 2 days.
 *   impossible-travel p=2.5%/card: right after a legit home transaction, 2-5 card-present
 *                  (swipe 90%) txns at resellable-goods merchants (RISKY_MCCS) in a city >= 1,500
 *                  km away within 10-55 min of it and of each other, $80-$900.
 *   amount-spike   p=5.0%/card: 1-2 txns at x20-x60 the card's typical amount at a new
 *                  merchant (MCC 5732/5944/5045/4829; 40% online).
 * Overall fraud rate comes out near 0.5% of transactions (printed at the end).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .reduce(
      (acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc),
      [],
    ),
);
const SEED = Number(args.seed ?? 20240611);
const USERS = Number(args.users ?? 4000);
const OUT = args.out ?? ".cache/fraud/transactions.csv";
const YEAR = 2019;
const START_MS = Date.UTC(YEAR, 0, 1);
const END_MS = Date.UTC(YEAR + 1, 0, 1);
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function mulberry32(a) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(SEED);
const uniform = (a, b) => a + (b - a) * rand();
const randint = (a, b) => a + Math.floor(rand() * (b - a + 1)); // inclusive
const pick = (arr) => arr[Math.floor(rand() * arr.length)];
const chance = (p) => rand() < p;
function normal() {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
function poisson(lambda) {
  const l = Math.exp(-lambda);
  let k = 0;
  let p = 1;
  do {
    k++;
    p *= rand();
  } while (p > l);
  return k - 1;
}
function weighted(items, weightOf) {
  const total = items.reduce((s, x) => s + weightOf(x), 0);
  let r = rand() * total;
  for (const x of items) {
    r -= weightOf(x);
    if (r <= 0) return x;
  }
  return items[items.length - 1];
}
function merchantId() {
  const hi = BigInt(Math.floor(rand() * 2 ** 32));
  const lo = BigInt(Math.floor(rand() * 2 ** 32));
  return BigInt.asIntN(64, (hi << 32n) | lo).toString();
}

// [city, state, base zip, lat, lon]
const CITIES = [
  ["New York", "NY", 10001, 40.7, -74.0],
  ["Los Angeles", "CA", 90001, 34.05, -118.24],
  ["Chicago", "IL", 60601, 41.88, -87.63],
  ["Houston", "TX", 77001, 29.76, -95.37],
  ["Phoenix", "AZ", 85001, 33.45, -112.07],
  ["Philadelphia", "PA", 19101, 39.95, -75.17],
  ["San Antonio", "TX", 78201, 29.42, -98.49],
  ["San Diego", "CA", 92101, 32.72, -117.16],
  ["Dallas", "TX", 75201, 32.78, -96.8],
  ["San Jose", "CA", 95101, 37.34, -121.89],
  ["Austin", "TX", 73301, 30.27, -97.74],
  ["Jacksonville", "FL", 32099, 30.33, -81.66],
  ["Columbus", "OH", 43085, 39.96, -83.0],
  ["Charlotte", "NC", 28201, 35.23, -80.84],
  ["Indianapolis", "IN", 46201, 39.77, -86.16],
  ["Seattle", "WA", 98101, 47.61, -122.33],
  ["Denver", "CO", 80201, 39.74, -104.99],
  ["Boston", "MA", 21011, 42.36, -71.06],
  ["Nashville", "TN", 37201, 36.16, -86.78],
  ["Detroit", "MI", 48201, 42.33, -83.05],
  ["Portland", "OR", 97201, 45.52, -122.68],
  ["Las Vegas", "NV", 88901, 36.17, -115.14],
  ["Memphis", "TN", 37501, 35.15, -90.05],
  ["Louisville", "KY", 40201, 38.25, -85.76],
  ["Baltimore", "MD", 21201, 39.29, -76.61],
  ["Milwaukee", "WI", 53201, 43.04, -87.91],
  ["Albuquerque", "NM", 87101, 35.08, -106.65],
  ["Tucson", "AZ", 85701, 32.22, -110.97],
  ["Fresno", "CA", 93701, 36.74, -119.79],
  ["Sacramento", "CA", 94203, 38.58, -121.49],
  ["Kansas City", "MO", 64101, 39.1, -94.58],
  ["Atlanta", "GA", 30301, 33.75, -84.39],
  ["Miami", "FL", 33101, 25.76, -80.19],
  ["Omaha", "NE", 68101, 41.26, -95.94],
  ["Minneapolis", "MN", 55401, 44.98, -93.27],
  ["Tulsa", "OK", 74101, 36.15, -95.99],
  ["Cleveland", "OH", 44101, 41.5, -81.69],
  ["New Orleans", "LA", 70112, 29.95, -90.07],
  ["Salt Lake City", "UT", 84101, 40.76, -111.89],
  ["Pittsburgh", "PA", 15201, 40.44, -79.99],
  ["Saint Louis", "MO", 63101, 38.63, -90.2],
  ["Richmond", "VA", 23218, 37.54, -77.44],
  ["Boise", "ID", 83701, 43.62, -116.2],
  ["Birmingham", "AL", 35201, 33.52, -86.8],
  ["Little Rock", "AR", 72201, 34.75, -92.29],
  ["Des Moines", "IA", 50301, 41.59, -93.62],
  ["Anchorage", "AK", 99501, 61.22, -149.9],
  ["Honolulu", "HI", 96801, 21.31, -157.86],
];
const FOREIGN = [
  ["Rome", "Italy"],
  ["Mexico City", "Mexico"],
  ["Toronto", "Canada"],
  ["London", "United Kingdom"],
  ["Tokyo", "Japan"],
  ["Paris", "France"],
  ["Berlin", "Germany"],
  ["Cancun", "Mexico"],
  ["Manila", "Philippines"],
  ["Lagos", "Nigeria"],
];
const TOWN_SUFFIX = [
  "Heights",
  "Park",
  "Springs",
  "Falls",
  "Grove",
  "Valley",
  "Hills",
  "Ridge",
  "Beach",
  "Creek",
];
const TOWN_PREFIX = [
  "Oak",
  "Cedar",
  "Maple",
  "Pine",
  "Elm",
  "Fair",
  "Green",
  "Lake",
  "River",
  "North",
  "South",
  "West",
  "East",
  "Spring",
  "Glen",
  "Brook",
  "Mill",
  "Stone",
];

// [mcc, typical $, weight for local spending, online?]
const MCCS = [
  [5411, 45, 20, 0],
  [5812, 30, 15, 0],
  [5814, 12, 15, 0],
  [5541, 40, 12, 0],
  [5912, 25, 6, 0],
  [5311, 60, 5, 1],
  [5300, 90, 4, 0],
  [5499, 15, 6, 0],
  [4121, 20, 4, 1],
  [5813, 35, 3, 0],
  [5942, 25, 2, 1],
  [5651, 70, 3, 0],
  [5732, 150, 1.5, 1],
  [5944, 250, 0.3, 0],
  [4829, 200, 0.5, 1],
  [7538, 250, 1, 0],
  [8011, 120, 1, 0],
  [8021, 150, 0.5, 0],
  [7832, 25, 1, 0],
  [4900, 120, 2, 1],
  [4814, 80, 2, 1],
  [5815, 10, 3, 1],
  [5310, 40, 3, 0],
  [7011, 200, 1, 0],
  [4511, 350, 0.5, 1],
  [5211, 80, 1.5, 0],
  [5719, 90, 0.7, 0],
  [7230, 40, 1, 0],
  [5193, 50, 0.3, 0],
  [9402, 15, 0.5, 0],
  [5970, 45, 0.3, 0],
  [7801, 100, 0.2, 1],
  [5964, 30, 1, 1],
  [5045, 400, 0.3, 1],
  [4784, 10, 1, 0],
  [5921, 25, 1, 0],
];
const MCC_TICKET = new Map(MCCS.map((m) => [m[0], m[1]]));
const TRAVEL_MCCS = [5812, 5814, 5541, 7011, 5813, 4121, 5411, 5499];
const RISKY_MCCS = [5732, 5944, 4829, 5045, 5311, 5651];

const _ERROR_SINGLE = [
  "Bad CVV",
  "Bad Card Number",
  "Bad Expiration",
  "Bad PIN",
  "Bad Zipcode",
  "Insufficient Balance",
  "Technical Glitch",
];
const ERROR_COMBOS = [
  "Bad PIN,Insufficient Balance",
  "Insufficient Balance,Technical Glitch",
  "Bad PIN,Technical Glitch",
  "Bad Card Number,Bad Expiration",
  "Bad Card Number,Bad CVV",
  "Bad Expiration,Bad CVV",
  "Bad Card Number,Insufficient Balance",
  "Bad CVV,Insufficient Balance",
  "Bad Expiration,Insufficient Balance",
  "Bad Zipcode,Insufficient Balance",
  "Bad Card Number,Bad Expiration,Insufficient Balance",
  "Bad Expiration,Technical Glitch",
  "Bad CVV,Technical Glitch",
  "Bad Card Number,Technical Glitch",
  "Bad Zipcode,Technical Glitch",
  "Bad PIN,Insufficient Balance,Technical Glitch",
]; // 7 singles + 16 combinations = 23 error strings
const LEGIT_ERRORS = [
  ["Insufficient Balance", 55],
  ["Bad PIN", 15],
  ["Technical Glitch", 14],
  ["Bad CVV", 2],
  ["Bad Card Number", 2],
  ["Bad Expiration", 2],
  ["Bad Zipcode", 1.5],
  ...ERROR_COMBOS.map((e) => [e, 0.1]),
];
const TESTING_ERRORS = [
  ["Bad CVV", 4],
  ["Bad Expiration", 3],
  ["Bad Card Number", 3],
  ["Bad Card Number,Bad CVV", 1],
  ["Bad Expiration,Bad CVV", 1],
  ["Bad Card Number,Bad Expiration", 1],
  ["Bad Zipcode", 1],
];
const TAKEOVER_ERRORS = [
  ["Bad PIN", 4],
  ["Insufficient Balance", 3],
  ["Bad PIN,Insufficient Balance", 1],
  ["Bad Zipcode", 1],
  ["Bad PIN,Technical Glitch", 0.5],
];
const weightedPair = (pairs) => weighted(pairs, (p) => p[1])[0];

// ---- world ---------------------------------------------------------------------------
const usedTownNames = new Set();
const merchants = []; // {id, mcc, city, state, zip, online}
function makeMerchant(mcc, city, state, zip, online) {
  const m = { id: merchantId(), mcc, city, state, zip, online };
  merchants.push(m);
  return m;
}
const localMcc = () => weighted(MCCS, (m) => m[2])[0];
const onlineMcc = () =>
  weighted(
    MCCS.filter((m) => m[3]),
    (m) => m[2],
  )[0];

const cities = CITIES.map(([name, state, zip, lat, lon]) => {
  const city = { name, state, zip, lat, lon, merchants: [], towns: [] };
  for (let i = 0; i < 120; i++)
    city.merchants.push(makeMerchant(localMcc(), name, state, zip + randint(0, 40), false));
  for (let t = 0; t < 4; t++) {
    let townName;
    do townName = `${pick(TOWN_PREFIX)} ${pick(TOWN_SUFFIX)}`;
    while (usedTownNames.has(`${townName}|${state}`));
    usedTownNames.add(`${townName}|${state}`);
    const townZip = zip + 100 + randint(0, 800);
    const town = { name: townName, merchants: [] };
    for (let i = 0; i < 20; i++)
      town.merchants.push(makeMerchant(localMcc(), townName, state, townZip, false));
    city.towns.push(town);
  }
  city.area = [...city.merchants, ...city.towns.flatMap((t) => t.merchants)];
  return city;
});
const foreign = FOREIGN.map(([name, country]) => ({
  name,
  country,
  merchants: Array.from({ length: 30 }, () =>
    makeMerchant(pick(TRAVEL_MCCS.concat(RISKY_MCCS)), name, country, "", false),
  ),
}));
const online = Array.from({ length: 400 }, () => makeMerchant(onlineMcc(), "ONLINE", "", "", true));
const onlineByMcc = (mccs) => online.filter((m) => mccs.includes(m.mcc));
const TESTING_MERCHANTS = onlineByMcc([5815, 5964, 5942, 5311]);
const BIG_ONLINE = onlineByMcc([5732, 5045, 5311, 4829]);

function km(a, b) {
  const r = Math.PI / 180;
  const x = (b.lon - a.lon) * r * Math.cos(((a.lat + b.lat) / 2) * r);
  const y = (b.lat - a.lat) * r;
  return 6371 * Math.sqrt(x * x + y * y);
}
const merchantsOfMcc = (list, mccs) => {
  const hits = list.filter((m) => mccs.includes(m.mcc));
  return hits.length ? hits : list;
};

// ---- legit transactions -------------------------------------------------------------
function newCard(user, card, home) {
  const p = {
    user,
    card,
    home,
    rate: uniform(0.1, 0.6),
    hourMean: uniform(9, 19),
    hourSd: uniform(2, 4),
    onlineShare: uniform(0.05, 0.3),
    spend: Math.exp(uniform(Math.log(0.5), Math.log(2))),
    chip: uniform(0.7, 0.97),
    traveler: chance(0.3),
  };
  const nLocal = randint(8, 25);
  p.habitual = Array.from({ length: nLocal }, () =>
    chance(0.7) ? pick(home.merchants) : pick(pick(home.towns).merchants),
  );
  p.habitualOnline = Array.from({ length: randint(2, 6) }, () => pick(online));
  return p;
}
function amountFor(p, mcc, factor = 1) {
  const base = (MCC_TICKET.get(mcc) ?? 50) * p.spend * factor;
  return Math.max(0.5, Math.round(base * Math.exp(0.6 * normal()) * 100) / 100);
}
function hourOf(p) {
  const h = Math.round(p.hourMean + p.hourSd * normal());
  return Math.min(23, Math.max(0, h));
}
function atHour(dayMs, hour) {
  return dayMs + hour * HOUR + randint(0, 59) * MIN;
}
function tx(_p, t, m, amount, chip, errors = "", fraud = false, pattern = "") {
  return { t, m, amount, chip, errors, fraud, pattern };
}
function inPersonChip(p) {
  return chance(p.chip) ? "Chip Transaction" : "Swipe Transaction";
}
function legitError() {
  return chance(0.015) ? weightedPair(LEGIT_ERRORS) : "";
}

function legitTransactions(p) {
  const out = [];
  const trips = [];
  const nTrips = poisson(1.2);
  for (let i = 0; i < nTrips; i++) {
    const start = START_MS + randint(0, 360) * DAY;
    const days = randint(2, 6);
    const isForeign = p.traveler && chance(0.15);
    const dest = isForeign ? pick(foreign) : pick(cities.filter((c) => c !== p.home));
    trips.push({ start, end: start + days * DAY, dest, isForeign });
  }
  for (let day = START_MS; day < END_MS; day += DAY) {
    const trip = trips.find((tr) => day >= tr.start && day < tr.end);
    const n = poisson(p.rate);
    for (let k = 0; k < n; k++) {
      const t = atHour(day, hourOf(p));
      let m;
      let chip;
      const factor = chance(0.005) ? uniform(4, 10) : 1;
      if (chance(p.onlineShare)) {
        m = chance(0.9) ? pick(p.habitualOnline) : pick(online);
        chip = "Online Transaction";
      } else if (trip) {
        const list = trip.isForeign ? trip.dest.merchants : trip.dest.area;
        m = pick(merchantsOfMcc(list, TRAVEL_MCCS));
        chip = trip.isForeign ? "Chip Transaction" : inPersonChip(p);
      } else {
        m = chance(0.88) ? pick(p.habitual) : pick(p.home.area);
        chip = inPersonChip(p);
      }
      out.push(tx(p, t, m, amountFor(p, m.mcc, factor), chip, legitError()));
    }
    if (trip && day === trip.start && !trip.isForeign && chance(0.5)) {
      const air = pick(onlineByMcc([4511]));
      out.push(
        tx(p, atHour(day - 7 * DAY, hourOf(p)), air, amountFor(p, 4511), "Online Transaction", ""),
      );
    }
  }
  return out.filter((x) => x.t >= START_MS && x.t < END_MS);
}

// ---- fraud patterns -----------------------------------------------------------------
const typical = (p) => 45 * p.spend;
function randomTime() {
  return START_MS + Math.floor(rand() * (END_MS - START_MS - 3 * DAY));
}
function cardTesting(p) {
  const out = [];
  let t = randomTime();
  const n = randint(4, 12);
  for (let i = 0; i < n; i++) {
    const m = pick(TESTING_MERCHANTS);
    const errors = chance(0.35) ? weightedPair(TESTING_ERRORS) : "";
    out.push(
      tx(
        p,
        t,
        m,
        Math.round(uniform(0.01, 2) * 100) / 100,
        "Online Transaction",
        errors,
        true,
        "card-testing",
      ),
    );
    t += randint(1, 6) * MIN;
  }
  if (chance(0.6)) {
    for (let i = randint(1, 3); i > 0; i--) {
      t += randint(5, 40) * MIN;
      out.push(
        tx(
          p,
          t,
          pick(BIG_ONLINE),
          Math.round(uniform(150, 1500) * 100) / 100,
          "Online Transaction",
          "",
          true,
          "card-testing",
        ),
      );
    }
  }
  return out;
}
function accountTakeover(p) {
  const out = [];
  const start = randomTime();
  const days = randint(1, 2);
  const mode = rand();
  const dest = pick(cities.filter((c) => c !== p.home && c.state !== p.home.state));
  const abroad = pick(foreign);
  for (let i = randint(4, 12); i > 0; i--) {
    const day = start - (start % DAY) + randint(0, days - 1) * DAY;
    const hour = chance(0.6) ? randint(0, 5) : randint(0, 23);
    let m;
    let chip;
    if (mode < 0.2) {
      m = pick(abroad.merchants);
      chip = pick(["Chip Transaction", "Swipe Transaction"]);
    } else if (mode < 0.8) {
      m = pick(onlineByMcc(RISKY_MCCS));
      chip = "Online Transaction";
    } else {
      m = pick(merchantsOfMcc(dest.area, RISKY_MCCS));
      chip = pick(["Chip Transaction", "Swipe Transaction"]);
    }
    const amount = Math.round(typical(p) * uniform(5, 15) * Math.exp(0.3 * normal()) * 100) / 100;
    out.push(
      tx(
        p,
        atHour(day, hour),
        m,
        amount,
        chip,
        chance(0.12) ? weightedPair(TAKEOVER_ERRORS) : "",
        true,
        "account-takeover",
      ),
    );
  }
  return out;
}
function skimmed(p, after) {
  const out = [];
  const start = after + randint(3, 40) * DAY;
  const dest = pick(cities.filter((c) => c !== p.home));
  for (let i = randint(2, 8); i > 0; i--) {
    const t = start + Math.floor(rand() * 2 * DAY);
    const m = pick(dest.area);
    out.push(
      tx(
        p,
        t,
        m,
        Math.round(uniform(40, 800) * 100) / 100,
        "Swipe Transaction",
        chance(0.1) ? "Bad PIN" : "",
        true,
        "compromised-merchant",
      ),
    );
  }
  return out;
}
function impossibleTravel(p, legit) {
  const anchors = legit.filter((x) => !x.m.online && x.m.state === p.home.state);
  if (!anchors.length) return [];
  const anchor = pick(anchors);
  const far = cities.filter((c) => km(c, p.home) >= 1500);
  const dest = pick(far);
  const out = [];
  let t = anchor.t;
  for (let i = randint(2, 5); i > 0; i--) {
    t += randint(10, 55) * MIN;
    const chip = chance(0.9) ? "Swipe Transaction" : "Chip Transaction";
    out.push(
      tx(
        p,
        t,
        pick(merchantsOfMcc(dest.area, RISKY_MCCS)),
        Math.round(uniform(80, 900) * 100) / 100,
        chip,
        chance(0.08) ? "Bad PIN" : "",
        true,
        "impossible-travel",
      ),
    );
  }
  return out;
}
function amountSpike(p) {
  const out = [];
  const t = randomTime();
  for (let i = randint(1, 2); i > 0; i--) {
    const isOnline = chance(0.4);
    const m = isOnline
      ? pick(onlineByMcc([5732, 5045, 4829]))
      : pick(merchantsOfMcc(p.home.area, [5732, 5944, 5045, 4829]));
    const amount = Math.round(typical(p) * uniform(20, 60) * 100) / 100;
    out.push(
      tx(
        p,
        t + i * randint(2, 30) * MIN,
        m,
        amount,
        isOnline ? "Online Transaction" : inPersonChip(p),
        "",
        true,
        "amount-spike",
      ),
    );
  }
  return out;
}

// ---- generate -----------------------------------------------------------------------
const cards = [];
for (let u = 0; u < USERS; u++) {
  const home = pick(cities);
  const nCards = weighted([1, 2, 3], (k) => [0.55, 0.3, 0.15][k - 1]);
  for (let c = 0; c < nCards; c++) {
    const p = newCard(u, c, home);
    p.txs = legitTransactions(p);
    cards.push(p);
  }
}
// Breached merchants: popular local merchants (many habitual customers).
const popularity = new Map();
for (const p of cards)
  for (const m of new Set(p.habitual)) popularity.set(m, (popularity.get(m) ?? 0) + 1);
const popular = [...popularity.entries()].filter(([, n]) => n >= 3).map(([m]) => m);
const breaches = [];
while (breaches.length < 20 && popular.length) {
  const m = popular.splice(Math.floor(rand() * popular.length), 1)[0];
  const start = START_MS + randint(0, 320) * DAY;
  breaches.push({ m, start, end: start + randint(14, 28) * DAY });
}
const counts = {};
for (const p of cards) {
  const fraud = [];
  if (chance(0.04)) fraud.push(...cardTesting(p));
  if (chance(0.035)) fraud.push(...accountTakeover(p));
  if (chance(0.025)) fraud.push(...impossibleTravel(p, p.txs));
  if (chance(0.05)) fraud.push(...amountSpike(p));
  for (const b of breaches) {
    const hit = p.txs.find((x) => x.m === b.m && x.t >= b.start && x.t < b.end);
    if (hit && chance(0.6)) fraud.push(...skimmed(p, hit.t));
  }
  for (const f of fraud) counts[f.pattern] = (counts[f.pattern] ?? 0) + 1;
  p.txs = p.txs.concat(fraud.filter((x) => x.t >= START_MS && x.t < END_MS));
  p.txs.sort((a, b) => a.t - b.t);
}

// ---- write CSV ----------------------------------------------------------------------
const pad2 = (n) => String(n).padStart(2, "0");
const csvField = (s) => (/[",]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const lines = [
  "User,Card,Year,Month,Day,Time,Amount,Use Chip,Merchant " +
    "Name,Merchant City,Merchant State,Zip,MCC,Errors?,Is Fraud?",
];
// side file: the fraud pattern of each data row ('' for legit), for per-pattern analysis
const patterns = [];
let total = 0;
let frauds = 0;
for (const p of cards) {
  for (const x of p.txs) {
    const d = new Date(x.t);
    lines.push(
      [
        p.user,
        p.card,
        d.getUTCFullYear(),
        d.getUTCMonth() + 1,
        d.getUTCDate(),
        `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`,
        `$${x.amount.toFixed(2)}`,
        x.chip,
        x.m.id,
        csvField(x.m.city),
        csvField(x.m.state),
        x.m.zip === "" ? "" : String(x.m.zip),
        x.m.mcc,
        csvField(x.errors),
        x.fraud ? "Yes" : "No",
      ].join(","),
    );
    patterns.push(x.pattern);
    total++;
    if (x.fraud) frauds++;
  }
}
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, `${lines.join("\n")}\n`);
writeFileSync(`${OUT.replace(/\.csv$/, "")}.patterns.txt`, `${patterns.join("\n")}\n`);
const summary = JSON.stringify({
  seed: SEED,
  users: USERS,
  cards: cards.length,
  merchants: merchants.length,
  transactions: total,
  fraud: frauds,
  fraudRate: +(frauds / total).toFixed(5),
  byPattern: counts,
  out: OUT,
});
writeFileSync(`${OUT.replace(/\.csv$/, "")}.json`, `${summary}\n`);
console.log(summary);
